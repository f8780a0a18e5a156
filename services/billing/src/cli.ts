import { billing } from "@bas/proto";
import { ClientError, connectClient } from "@bas/service-kit";
import { loadCliConfig } from "./config";

const USAGE = `usage (BILLING_ADDR, default 127.0.0.1:50054):
  npx tsx services/billing/src/cli.ts credit <projectId>               show the credit of a project
  npx tsx services/billing/src/cli.ts set-credit <projectId> <usd|none> set (or remove) its credit limit
  npx tsx services/billing/src/cli.ts totals <projectId> [sessionId]    show what it was charged`;

/** Operators' command line for credit limits and totals, over billing's gRPC API. */
async function main(args: string[]): Promise<number> {
  const [command, projectId, value] = args;
  if (!command || !projectId || (command === "set-credit" && !value)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const client = connectClient(billing.BillingClient, loadCliConfig().BILLING_ADDR);
  try {
    let answer: unknown;
    if (command === "credit") answer = await client.getCredit({ projectId });
    else if (command === "set-credit") {
      answer = await client.setCredit({ projectId, ...(value === "none" ? {} : { limitUsd: value }) });
    } else if (command === "totals")
      answer = await client.getTotals({ projectId, ...(value ? { sessionId: value } : {}) });
    else {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof ClientError ? err.details : String(err)}\n`);
    return 1;
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
