import type { webhooks } from "@bas/proto";
import type { Command } from "commander";
import type { Clients } from "../clients";
import type { Output } from "../output";
import { resolveProject } from "../project-ref";

type Run = (action: () => Promise<Output>) => Promise<void>;

const describe = (e: webhooks.Endpoint) => `${e.id}  ${e.url}  ${e.events.length ? e.events.join(",") : "every event"}`;

/** `--events a,b` as a list; "all" (or nothing listed) is every type, the empty list. */
function eventTypes(option: string | undefined): string[] | undefined {
  if (option === undefined) return undefined;
  const types = option
    .split(",")
    .map((type) => type.trim())
    .filter(Boolean);
  return types.length === 1 && types[0] === "all" ? [] : types;
}

export function addWebhookCommands(program: Command, clients: Clients, run: Run): void {
  const hooks = program
    .command("webhooks")
    .description("endpoints that get every status change of a project's tasks and runs, signed (docs/webhooks.md)");
  const withSecret = (created: webhooks.CreatedEndpoint): Output => ({
    text: [`${created.endpoint!.id}  ${created.endpoint!.url}`, `secret ${created.secret} (shown only now)`],
    json: created,
  });
  hooks
    .command("add <project> <url>")
    .description("register an endpoint; prints its signing secret, shown this once")
    .option(
      "--events <types>",
      "comma-separated event types to get (agent.task.status_update, run.status_update); default every type",
    )
    .action((ref: string, url: string, options: { events?: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const events = eventTypes(options.events) ?? [];
        return withSecret(await clients.webhooks().createEndpoint({ projectId: project.id, url, events }));
      }),
    );
  hooks
    .command("update <project> <id>")
    .description(
      "change an endpoint's URL or event types; its secret and log stay, and what is pending follows the URL",
    )
    .option("--url <url>", "the new address; it gets a test event and what is still pending")
    .option("--events <types>", 'comma-separated event types to get from now on, or "all"')
    .action((ref: string, id: string, options: { url?: string; events?: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const types = eventTypes(options.events);
        const endpoint = await clients.webhooks().updateEndpoint({
          projectId: project.id,
          endpointId: id,
          url: options.url,
          events: types && { types },
        });
        return { text: [describe(endpoint)], json: endpoint };
      }),
    );
  hooks
    .command("rotate-secret <project> <id>")
    .description("give an endpoint a new signing secret, shown this once; the old one signs nothing from now on")
    .action((ref: string, id: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        return withSecret(await clients.webhooks().rotateSecret({ projectId: project.id, endpointId: id }));
      }),
    );
  hooks
    .command("resend <project> <id> <delivery>")
    .description("send a delivery again (one that failed, or that the receiver lost), with another day of retries")
    .action((ref: string, id: string, delivery: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const resent = await clients
          .webhooks()
          .resendDelivery({ projectId: project.id, endpointId: id, deliveryId: delivery });
        return { text: [`${resent.id}  ${resent.eventType}  ${resent.state}, due now`], json: resent };
      }),
    );
  hooks
    .command("list <project>")
    .description("the project's endpoints")
    .action((ref: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const { endpoints } = await clients.webhooks().listEndpoints({ projectId: project.id });
        return {
          text: endpoints.length ? endpoints.map(describe) : ["no webhooks"],
          json: endpoints,
        };
      }),
    );
  hooks
    .command("remove <project> <id>")
    .description("stop deliveries to an endpoint")
    .action((ref: string, id: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        await clients.webhooks().deleteEndpoint({ projectId: project.id, endpointId: id });
        return { text: [`removed ${id}`], json: { id, removed: true } };
      }),
    );
  hooks
    .command("deliveries <project> <id>")
    .description("what was sent to an endpoint and how it answered, newest first")
    .option("--limit <n>", "how many", "20")
    .action((ref: string, id: string, options: { limit: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const { deliveries } = await clients
          .webhooks()
          .listDeliveries({ projectId: project.id, endpointId: id, limit: Number(options.limit) || 20 });
        return {
          text: deliveries.length
            ? deliveries.map(
                (d) =>
                  `${d.createdAt?.toISOString()}  ${d.id}  ${d.eventType}  ${d.state}  attempts ${d.attempts}` +
                  (d.lastStatus !== undefined ? `  last ${d.lastStatus}` : "") +
                  (d.lastError && d.state !== "delivered" ? `  (${d.lastError})` : ""),
              )
            : ["nothing delivered yet"],
          json: deliveries,
        };
      }),
    );
}
