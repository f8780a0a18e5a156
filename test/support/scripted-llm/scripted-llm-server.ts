import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { completionBody, completionChunks, type CompletionContext } from "./completion-body";
import type { RecordedRequest, ScriptedAnswer, ScriptStep } from "./types";

export interface ScriptedLlm {
  /** Base URL ending in `/v1`; the scenario is then chosen by API key or `model`. */
  url: string;
  /** Base URL that selects `key` by path (`…/s/<key>/v1`), whatever API key and model the client sends. */
  urlFor(key: string): string;
  /** Sets (or replaces) the steps of scenario `key`; each request consumes the next step. */
  script(key: string, steps: ScriptStep[]): void;
  /** Requests matched to `key`, in arrival order. */
  requests(key: string): RecordedRequest[];
  /** Every request received, matched or not. */
  allRequests(): RecordedRequest[];
  /** Steps of `key` not consumed yet. */
  remaining(key: string): number;
  close(): Promise<void>;
}

interface Scenario {
  steps: ScriptStep[];
  next: number;
  requests: RecordedRequest[];
}

const PATH_KEY = /^\/s\/([^/]+)(\/.*)$/;

/**
 * Starts a scripted OpenAI-compatible server on 127.0.0.1, port 0.
 * Scenario lookup, first match wins: the `/s/<key>` path prefix, then `Authorization: Bearer <key>`, then `model`.
 * An unknown scenario or an exhausted script answers 400 with a message saying so (not retried by SDKs).
 */
export async function startScriptedLlm(): Promise<ScriptedLlm> {
  const scenarios = new Map<string, Scenario>();
  const all: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let completions = 0;
  let calls = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function resolveKey(path: string, headers: IncomingMessage["headers"], body: any): string | null {
    const fromPath = PATH_KEY.exec(path)?.[1];
    if (fromPath !== undefined) return decodeURIComponent(fromPath);
    const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? "")?.[1];
    if (bearer && scenarios.has(bearer)) return bearer;
    if (typeof body?.model === "string" && scenarios.has(body.model)) return body.model;
    return null;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    let body: any;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const fullPath = (req.url ?? "/").split("?")[0];
    const key = resolveKey(fullPath, req.headers, body);
    const path = PATH_KEY.exec(fullPath)?.[2] ?? fullPath;
    const record: RecordedRequest = {
      key,
      method: req.method ?? "GET",
      path: fullPath,
      headers: { ...req.headers },
      body,
      rawBody,
      stepIndex: null,
    };
    all.push(record);
    const scenario = key === null ? undefined : scenarios.get(key);
    scenario?.requests.push(record);

    if (req.method === "GET" && path === "/v1/models") {
      const ids = key !== null ? [key] : [...scenarios.keys()];
      return sendJson(res, 200, {
        object: "list",
        data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted-llm" })),
      });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return sendError(res, 404, `scripted-llm: no route ${req.method} ${path}`);
    }
    if (body === undefined || !Array.isArray(body.messages)) {
      return sendError(res, 400, "scripted-llm: body must be JSON with a messages array");
    }
    if (!scenario) {
      return sendError(res, 400, `scripted-llm: no script matches (path, API key or model "${body.model}")`);
    }
    if (scenario.next >= scenario.steps.length) {
      return sendError(res, 400, `scripted-llm: script "${key}" is exhausted after ${scenario.steps.length} steps`);
    }
    record.stepIndex = scenario.next;
    const step = scenario.steps[scenario.next++];
    let answer: ScriptedAnswer;
    try {
      answer = typeof step === "function" ? await step(record) : step;
    } catch (err) {
      return sendError(res, 500, `scripted-llm: step ${record.stepIndex} of "${key}" threw: ${String(err)}`, NO_RETRY);
    }
    if (answer.delayMs) await sleep(answer.delayMs);
    if (res.destroyed) return;
    if ("httpError" in answer) {
      const { status, body: errorBody, headers } = answer.httpError;
      if (errorBody === undefined) return sendError(res, status, `scripted error ${status}`, headers);
      const text = typeof errorBody === "string" ? errorBody : JSON.stringify(errorBody);
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(text);
      return;
    }
    const ctx: CompletionContext = {
      id: `chatcmpl-scripted-${++completions}`,
      model: typeof body.model === "string" ? body.model : "scripted",
      created: 1_700_000_000,
      nextCallId: () => `call_${++calls}`,
    };
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const c of completionChunks(answer, ctx, body.stream_options?.include_usage === true)) {
        res.write(`data: ${JSON.stringify(c)}\n\n`);
      }
      res.end("data: [DONE]\n\n");
      return;
    }
    sendJson(res, 200, completionBody(answer, ctx));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendError(res, 500, `scripted-llm: ${String(err)}`, NO_RETRY);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${origin}/v1`,
    urlFor: (key) => `${origin}/s/${encodeURIComponent(key)}/v1`,
    script(key, steps) {
      scenarios.set(key, { steps: [...steps], next: 0, requests: scenarios.get(key)?.requests ?? [] });
    },
    requests: (key) => [...(scenarios.get(key)?.requests ?? [])],
    allRequests: () => [...all],
    remaining(key) {
      const s = scenarios.get(key);
      return s ? s.steps.length - s.next : 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A failure of the script itself: retrying would silently consume the scenario's next step. */
const NO_RETRY = { "x-should-retry": "false" };

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  // Our own complaints (unknown scenario, exhausted script) must not be retried by the SDK.
  const retry =
    status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429 ? "false" : undefined;
  sendJson(
    res,
    status,
    { error: { message, type: status === 429 ? "rate_limit_error" : "scripted_error", param: null, code: null } },
    { ...(retry ? { "x-should-retry": retry } : {}), ...headers },
  );
}
