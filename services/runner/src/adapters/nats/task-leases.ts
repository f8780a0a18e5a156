import type { JetStreamClient } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import type { PendingStep } from "../../domain/step-memory";

/** This attempt's claim on a task; the latest attempt always wins. */
export interface TaskLease {
  /**
   * True while no later attempt has claimed the task; refreshes the claim. With `pending`, also writes down the step
   * this attempt is about to act on, for the next attempt should this one die while acting.
   */
  holds(pending?: PendingStep): Promise<boolean>;
  release(): Promise<void>;
}

export interface ClaimedLease extends TaskLease {
  /** The step the previous attempt was acting on when it stopped, if it wrote one down. */
  previousPending: PendingStep | undefined;
}

export interface TaskLeases {
  claim(taskId: string, holder: { runnerId: string; attempt: number }): Promise<ClaimedLease>;
}

/** The KV bucket of a namespace's leases (its stream is `KV_<bucket>`). */
export const leaseBucketName = (namespace: string) => `${namespace}_runner_leases`;

interface LeaseValue {
  runnerId: string;
  attempt: number;
  at: string;
  pending?: PendingStep;
}

const isWrongSequence = (err: unknown) =>
  /wrong last sequence|10071|key exists/i.test(String((err as Error)?.message ?? err));

function parse(value: Uint8Array | undefined): LeaseValue | undefined {
  if (!value?.length) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(value)) as LeaseValue;
  } catch {
    return undefined;
  }
}

/**
 * Task leases on a JetStream KV bucket. JetStream redelivers a task only after its runner fell silent; the new
 * attempt takes the lease over (compare-and-set, so it also learns what the last holder was doing), and the old
 * runner, should it come back (a long pause, a network split), sees its revision is gone before its next action and
 * stops: a task is never worked by two runners beyond one step. The lease of an attempt that died keeps the step it
 * was acting on; a lease is deleted only when its task is done with.
 */
export async function createTaskLeases(js: JetStreamClient, namespace: string, replicas = 1): Promise<TaskLeases> {
  const kv: KV = await new Kvm(js).create(leaseBucketName(namespace), {
    history: 1,
    ttl: 24 * 60 * 60 * 1000,
    replicas,
  });
  return {
    async claim(taskId, holder) {
      const key = `task.${taskId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
      const leaseValue = (pending?: PendingStep) =>
        JSON.stringify({
          ...holder,
          at: new Date().toISOString(),
          ...(pending ? { pending } : {}),
        } satisfies LeaseValue);
      let revision: number;
      let previous: LeaseValue | undefined;
      for (;;) {
        const entry = await kv.get(key);
        previous = entry?.operation === "PUT" ? parse(entry.value) : undefined;
        try {
          revision = entry ? await kv.update(key, leaseValue(), entry.revision) : await kv.create(key, leaseValue());
          break;
        } catch (err) {
          // Another attempt wrote the key between our read and our write: read again.
          if (!isWrongSequence(err)) throw err;
        }
      }
      let lost = false;
      return {
        previousPending: previous?.pending,
        async holds(pending) {
          if (lost) return false;
          try {
            revision = await kv.update(key, leaseValue(pending), revision);
            return true;
          } catch (err) {
            // A wrong last sequence means another attempt wrote the key; anything else (NATS away) is not proof.
            if (isWrongSequence(err)) {
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
