import { createServiceMetrics, type ServiceMetrics } from "@bas/service-kit";
import { Counter, Gauge, Histogram } from "prom-client";
import type { RunnerMetrics } from "../../app/ports";

export interface RunnerPrometheusMetrics extends ServiceMetrics, RunnerMetrics {
  /** Where the task gauges read their figures when Prometheus scrapes. */
  countTasks(source: TaskCounts): void;
}

export interface TaskCounts {
  /** Tasks this runner works right now. */
  running(): number;
  /** Tasks waiting in the work queue for any runner. */
  queued(): Promise<number>;
}

/** Model calls take from under a second (a small local model) to minutes (a reasoning model). */
const MODEL_SECONDS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];
/** A step is a look at the page, a model call and the actions: seconds, a minute with a slow model. */
const STEP_SECONDS = [0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];

/**
 * The runner's Prometheus metrics on top of what every service exports. `model` is the task's model value, the one
 * billing prices, so latency, tokens and cost line up by model; the gateway accepts only the model catalog's values,
 * which bounds the label.
 */
export function createRunnerMetrics(): RunnerPrometheusMetrics {
  const base = createServiceMetrics("runner");
  const registers = [base.registry];
  let counts: TaskCounts | undefined;
  new Gauge({
    name: "bas_runner_tasks_running",
    help: "Tasks this runner works right now.",
    registers,
    collect() {
      if (counts) this.set(counts.running());
    },
  });
  new Gauge({
    name: "bas_runner_tasks_queued",
    help: "Tasks in the work queue no runner has taken yet (the same figure on every runner).",
    registers,
    async collect() {
      // NATS unreachable: the last figure stays (the consumer lag gauge, which then has no sample, tells the outage).
      const queued = await counts?.queued().catch(() => undefined);
      if (queued !== undefined) this.set(queued);
    },
  });
  const modelDuration = new Histogram({
    name: "bas_runner_model_call_duration_seconds",
    help: "Model calls, by model and outcome (ok, error, cancelled), and how long each took (SDK retries included).",
    labelNames: ["model", "outcome"] as const,
    buckets: MODEL_SECONDS,
    registers,
  });
  const tokens = new Counter({
    name: "bas_runner_model_tokens_total",
    help: "Tokens of model calls as the provider reported them, by model and direction (input, output).",
    labelNames: ["model", "direction"] as const,
    registers,
  });
  const stepDuration = new Histogram({
    name: "bas_runner_step_duration_seconds",
    help: "Agent steps (observe, decide, act, record), and how long each took; its _count counts the steps.",
    buckets: STEP_SECONDS,
    registers,
  });

  return {
    ...base,
    countTasks(source) {
      counts = source;
    },
    modelCalled({ model, seconds, outcome, usage }) {
      modelDuration.observe({ model, outcome }, seconds);
      if (!usage) return;
      tokens.inc({ model, direction: "input" }, usage.inputTokens);
      tokens.inc({ model, direction: "output" }, usage.outputTokens);
    },
    stepTaken(seconds) {
      stepDuration.observe(seconds);
    },
  };
}
