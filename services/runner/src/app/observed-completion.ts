import { inSpan } from "@bas/service-kit/tracing";
import type { ChatRequest, ChatResult, RunnerMetrics } from "./ports";

type Complete = (request: ChatRequest) => Promise<ChatResult>;

/** The model a call goes to: the task's model value (as billed) and the provider's name for it. */
export interface CalledModel {
  model: string;
  providerModel: string;
}

/**
 * A model call as operators see it: a `model.call` span with the OpenTelemetry GenAI attributes (the provider's
 * model, the tokens it reported; its HTTP request is a child), and its latency, outcome and tokens counted by the
 * task's model value, the one cost is labelled with. A call the task's stop aborted is `cancelled`, not an error.
 */
export function observeCompletion(called: CalledModel, metrics: RunnerMetrics, complete: Complete): Complete {
  const attributes = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": called.providerModel,
    "bas.model": called.model,
  };
  return (request) =>
    inSpan("model.call", { attributes }, async (span) => {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const result = await complete(request);
        span.setAttributes({
          "gen_ai.usage.input_tokens": result.usage.inputTokens,
          "gen_ai.usage.output_tokens": result.usage.outputTokens,
        });
        metrics.modelCalled({ model: called.model, seconds: seconds(), outcome: "ok", usage: result.usage });
        return result;
      } catch (err) {
        const outcome = request.signal?.aborted ? "cancelled" : "error";
        metrics.modelCalled({ model: called.model, seconds: seconds(), outcome });
        throw err;
      }
    });
}
