import type { Command } from "commander";
import { CliError, type Clients } from "../clients";
import type { Output } from "../output";
import { resolveProject } from "../project-ref";

type Run = (action: () => Promise<Output>) => Promise<void>;

const usd = (value: string | undefined) => (value === undefined ? "unlimited" : `$${value}`);

export function addBillingCommands(program: Command, clients: Clients, run: Run): void {
  const billing = program.command("billing").description("what projects are charged, and their credit limits");
  billing
    .command("credit <project>")
    .description("the project's credit: limit, spent, balance")
    .action((ref: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const credit = await clients.billing().getCredit({ projectId: project.id });
        return {
          text: [`limit ${usd(credit.limitUsd)}  spent $${credit.spentUsd}  balance ${usd(credit.balanceUsd)}`],
          json: credit,
        };
      }),
    );
  billing
    .command("set-credit <project> <usd>")
    .description('set the project\'s credit limit in USD, or "none" for unlimited')
    .action((ref: string, limit: string) =>
      run(async () => {
        if (limit !== "none" && !/^\d+(\.\d+)?$/.test(limit)) {
          throw new CliError(`'${limit}' is not an amount in USD (e.g. 25 or 12.50) nor "none"`);
        }
        const project = await resolveProject(clients, ref);
        const credit = await clients
          .billing()
          .setCredit({ projectId: project.id, ...(limit === "none" ? {} : { limitUsd: limit }) });
        return { text: [`limit ${usd(credit.limitUsd)}  spent $${credit.spentUsd}`], json: credit };
      }),
    );
  billing
    .command("totals <project>")
    .description("what the project (or one of its sessions) was charged")
    .option("--session <id>", "one session's totals")
    .action((ref: string, options: { session?: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const totals = await clients
          .billing()
          .getTotals({ projectId: project.id, ...(options.session ? { sessionId: options.session } : {}) });
        return {
          text: [
            `total $${totals.totalCostUsd}  (model $${totals.llmCostUsd}, proxy $${totals.proxyCostUsd}, browsers $${totals.browserCostUsd})`,
            `tokens ${totals.inputTokens} in, ${totals.outputTokens} out; proxy ${totals.proxyUsedMb} MB`,
          ],
          json: totals,
        };
      }),
    );

  program
    .command("runner")
    .description("the runners")
    .command("status")
    .description("the tasks a runner works right now")
    .action(() =>
      run(async () => {
        const status = await clients.runner().getStatus({});
        const sessions = status.sessionIds.length ? `: ${status.sessionIds.join(", ")}` : "";
        return { text: [`${status.activeTasks} active task(s)${sessions}`], json: status };
      }),
    );
}
