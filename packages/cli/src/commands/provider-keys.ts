import type { Command } from "commander";
import type { runner } from "@bas/proto";
import { CliError, type Clients } from "../clients";
import { date, type Output } from "../output";
import { resolveProject } from "../project-ref";

type Run = (action: () => Promise<Output>) => Promise<void>;

const keyLine = (k: runner.ProviderKeyInfo) => `${k.provider}  …${k.keyHint}  updated ${date(k.updatedAt)}`;

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("API key: ");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

export function addProviderKeyCommands(program: Command, clients: Clients, run: Run): void {
  const keys = program
    .command("provider-keys")
    .description("a project's own model provider keys, for sessions with use_own_key");
  const provider = ["--provider <name>", 'the provider as MODEL_ROUTES names it ("provider")', "default"] as const;
  keys
    .command("set <project>")
    .description("store the project's key for a provider (read from PROVIDER_API_KEY, else from stdin)")
    .option(...provider)
    .action((ref: string, options: { provider: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const apiKey = process.env.PROVIDER_API_KEY ?? (await readStdin());
        if (!apiKey) throw new CliError("no key given: set PROVIDER_API_KEY or pipe the key in");
        const stored = await clients
          .runner()
          .setProviderKey({ projectId: project.id, apiKey, provider: options.provider });
        return { text: [keyLine(stored)], json: stored };
      }),
    );
  keys
    .command("delete <project>")
    .description("remove the project's key for a provider")
    .option(...provider)
    .action((ref: string, options: { provider: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        await clients.runner().deleteProviderKey({ projectId: project.id, provider: options.provider });
        return { text: [`deleted the '${options.provider}' key of ${project.name}`], json: { deleted: true } };
      }),
    );
  keys
    .command("list <project>")
    .description("the project's stored keys (their last 4 characters only)")
    .action((ref: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const { keys: all } = await clients.runner().listProviderKeys({ projectId: project.id });
        return { text: all.length ? all.map(keyLine) : ["(no keys)"], json: all };
      }),
    );
  keys
    .command("check <project>")
    .description("would use_own_key work for this model?")
    .requiredOption("--model <model>", "the session's model value")
    .action((ref: string, options: { model: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const answer = await clients.runner().checkOwnKey({ projectId: project.id, model: options.model });
        const verdict = answer.present ? "a key is stored" : "no key is stored";
        return { text: [`${options.model} → provider '${answer.provider}': ${verdict}`], json: answer };
      }),
    );
}
