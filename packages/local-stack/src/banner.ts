/** What the terminal shows once the stack is up: where it is, the key, and a first request that can succeed. */
export function banner(options: { publicUrl: string; apiKey: string; dataDir: string; modelConfigured: boolean }) {
  const { publicUrl, apiKey } = options;
  const curl = (path: string, body: string) => [
    `  curl -s -H 'X-Service-API-Key: ${apiKey}' -H 'Content-Type: application/json' \\`,
    `    -d '${body}' ${publicUrl}${path}`,
  ];
  const tryIt = options.modelConfigured
    ? ["Try it:", ...curl("/api/v3/sessions", '{"task":"Open example.com and tell me its title"}')]
    : [
        "No model is configured, so tasks are refused (400) until you start with one, e.g.:",
        "  LLM_BASE_URL=https://api.openai.com/v1 LLM_API_KEY=sk-... npm start",
        "  LLM_BASE_URL=http://127.0.0.1:11434/v1 LLM_MODEL=llama3.1 npm start   (a local Ollama)",
        "Browsers work without one. Try one (connect puppeteer or Playwright to its cdpUrl):",
        ...curl("/api/v4/browsers", "{}"),
      ];
  return [
    "",
    "Browser agent service is up.",
    `  base URL:  ${publicUrl}`,
    `  API key:   ${apiKey}`,
    `  API docs:  ${publicUrl}/api/v3/docs (sessions), ${publicUrl}/api/v4/docs (runs, browsers, webhooks)`,
    `  data:      ${options.dataDir}`,
    `  CLI:       npx bas help`,
    "",
    ...tryIt,
    "",
    "Ctrl-C stops everything.",
  ].join("\n");
}
