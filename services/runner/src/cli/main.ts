import { parseArgs } from "node:util";
import { runner } from "@bas/proto";
import { ClientError, ConfigError, connectClient } from "@bas/service-kit";
import { loadRunnerCliConfig } from "../config";

const USAGE = `Usage: npm run cli -w @bas/runner -- <command> [options]

Commands (talk to the runner's gRPC API at RUNNER_ADDR, default 127.0.0.1:50053):
  set-key    --project <id> [--provider <name>]   store the project's own provider key (use_own_key);
                                                 the key is read from PROVIDER_API_KEY or from stdin
  delete-key --project <id> [--provider <name>]  remove it
  list-keys  --project <id>                      the project's stored keys (last 4 characters only)
  check-key  --project <id> --model <model>      would use_own_key work for this model?
  status                                         tasks this runner works right now

--provider names the provider as MODEL_ROUTES does ("provider"); default "default".`;

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("API key: ");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      project: { type: "string" },
      provider: { type: "string" },
      model: { type: "string" },
      help: { type: "boolean" },
    },
  });
  const command = positionals[0];
  if (!command || values.help) {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const config = loadRunnerCliConfig();
  const client = connectClient(runner.RunnerClient, config.RUNNER_ADDR);
  const project = () => {
    if (!values.project) throw new UsageError("--project is required");
    return values.project;
  };
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  try {
    switch (command) {
      case "set-key": {
        const apiKey = config.PROVIDER_API_KEY ?? (await readStdin());
        if (!apiKey) throw new UsageError("no key given (PROVIDER_API_KEY or stdin)");
        print(
          await client.setProviderKey({
            projectId: project(),
            apiKey,
            ...(values.provider ? { provider: values.provider } : {}),
          }),
        );
        return 0;
      }
      case "delete-key":
        await client.deleteProviderKey({
          projectId: project(),
          ...(values.provider ? { provider: values.provider } : {}),
        });
        print({ deleted: true });
        return 0;
      case "list-keys":
        print(await client.listProviderKeys({ projectId: project() }));
        return 0;
      case "check-key":
        if (!values.model) throw new UsageError("--model is required");
        print(await client.checkOwnKey({ projectId: project(), model: values.model }));
        return 0;
      case "status":
        print(await client.getStatus({}));
        return 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } finally {
    client.close();
  }
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    else if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else if (err instanceof ClientError) process.stderr.write(`runner answered: ${err.message}\n`);
    else process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
