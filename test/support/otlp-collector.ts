import { createServer } from "node:http";

export interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpCollector {
  url: string;
  /** The spans of the OTLP/HTTP JSON trace exports received so far. */
  spans(): ExportedSpan[];
  close(): Promise<void>;
}

/** A stand-in OTLP/HTTP collector on 127.0.0.1: it keeps what it is sent and answers 200. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const received: { path: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", body });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    spans: () => received.filter((r) => r.path === "/v1/traces").flatMap((r) => spansOf(r.body)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function spansOf(body: string): ExportedSpan[] {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    return []; // a protobuf export: only the JSON protocol is read
  }
  const value = (v: any) => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue;
  const attributes = (list: any[] = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  return (parsed.resourceSpans ?? []).flatMap((rs: any) => {
    const service = String(attributes(rs.resource?.attributes)["service.name"]);
    return (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: any) => ({
        service,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        attributes: attributes(s.attributes),
      })),
    );
  });
}
