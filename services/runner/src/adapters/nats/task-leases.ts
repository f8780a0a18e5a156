import type { JetStreamClient } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";

/** This attempt's claim on a task; the latest attempt always wins. */
export interface TaskLease {
  /** True while no later attempt has claimed the task; refreshes the claim. */
  holds(): Promise<boolean>;
  release(): Promise<void>;
}

export interface TaskLeases {
  claim(taskId: string, holder: { runnerId: string; attempt: number }): Promise<TaskLease>;
}

/** The KV bucket of a namespace's leases (its stream is `KV_<bucket>`). */
export const leaseBucketName = (namespace: string) => `${namespace}_runner_leases`;

/**
 * Task leases on a JetStream KV bucket. JetStream redelivers a task only after its runner fell silent; the new
 * attempt overwrites the lease, and the old runner, should it come back (a long pause, a network split), sees its
 * revision is gone at its next step and stops: a task is never worked by two runners beyond one step.
 */
export async function createTaskLeases(js: JetStreamClient, namespace: string): Promise<TaskLeases> {
  const kv: KV = await new Kvm(js).create(leaseBucketName(namespace), { history: 1, ttl: 24 * 60 * 60 * 1000 });
  return {
    async claim(taskId, holder) {
      const key = `task.${taskId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      const value = JSON.stringify({ ...holder, at: new Date().toISOString() });
      let revision = await kv.put(key, value);
      let lost = false;
      return {
        async holds() {
          if (lost) return false;
          try {
            revision = await kv.update(key, value, revision);
            return true;
          } catch (err) {
            // A wrong last sequence means another attempt wrote the key; anything else (NATS away) is not proof.
            if (/wrong last sequence|10071/i.test(String((err as Error)?.message ?? err))) {
              lost = true;
              return false;
            }
            throw err;
          }
        },
        async release() {
          if (lost) return;
          await kv.delete(key, { previousSeq: revision }).catch(() => undefined);
        },
      };
    },
  };
}
