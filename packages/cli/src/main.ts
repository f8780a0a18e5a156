import { status } from "@grpc/grpc-js";
import { ClientError } from "@bas/service-kit/grpc-client";
import { Command, CommanderError } from "commander";
import { addBillingCommands } from "./commands/billing";
import { addProjectCommands } from "./commands/projects";
import { addProviderKeyCommands } from "./commands/provider-keys";
import { addWebhookCommands } from "./commands/webhooks";
import { CliError, createClients } from "./clients";
import { type Output, print } from "./output";

/** Exit codes: 0 done, 1 refused or failed (the message says why), 2 a usage mistake (the help says how). */
async function main(argv: string[]): Promise<number> {
  const clients = createClients();
  const program = new Command("bas")
    .description(
      "Projects, API keys, provider keys, credit, webhooks and runners of a browser agent service. It finds the local " +
        "stack (.data/stack.env, written by npm start) by itself; GATEWAY_ADDR, SESSIONS_ADDR, RUNNER_ADDR, BILLING_ADDR or " +
        "DATA_DIR point it elsewhere. A <project> is a name or an id.",
    )
    .option("--json", "print JSON instead of text")
    .showHelpAfterError()
    .exitOverride();
  const run = async (action: () => Promise<Output>) => print(await action(), Boolean(program.opts().json));
  addProjectCommands(program, clients, run);
  addProviderKeyCommands(program, clients, run);
  addBillingCommands(program, clients, run);
  addWebhookCommands(program, clients, run);

  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 2;
    }
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof CliError) process.stderr.write(`bas: ${err.message}\n`);
    else if (err instanceof ClientError && err.retryable)
      process.stderr.write(`bas: the service did not answer (${err.details}): is the stack running (npm start)?\n`);
    else if (err instanceof ClientError && err.code !== status.INTERNAL) process.stderr.write(`bas: ${err.details}\n`);
    else process.stderr.write(`bas: ${(err as Error)?.stack ?? err}\n`);
    return 1;
  } finally {
    clients.close();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
