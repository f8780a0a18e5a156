import type { Command } from "commander";
import type { Clients } from "../clients";
import type { Output } from "../output";
import { resolveProject } from "../project-ref";

type Run = (action: () => Promise<Output>) => Promise<void>;

export function addWebhookCommands(program: Command, clients: Clients, run: Run): void {
  const hooks = program
    .command("webhooks")
    .description("endpoints that get every status change of a project's tasks and runs, signed (docs/webhooks.md)");
  hooks
    .command("add <project> <url>")
    .description("register an endpoint; prints its signing secret, shown this once")
    .action((ref: string, url: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const created = await clients.webhooks().createEndpoint({ projectId: project.id, url });
        return {
          text: [`${created.endpoint!.id}  ${created.endpoint!.url}`, `secret ${created.secret} (shown only now)`],
          json: created,
        };
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
          text: endpoints.length ? endpoints.map((e) => `${e.id}  ${e.url}`) : ["no webhooks"],
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
                  `${d.createdAt?.toISOString()}  ${d.eventType}  ${d.state}  attempts ${d.attempts}` +
                  (d.lastStatus !== undefined ? `  last ${d.lastStatus}` : "") +
                  (d.lastError && d.state !== "delivered" ? `  (${d.lastError})` : ""),
              )
            : ["nothing delivered yet"],
          json: deliveries,
        };
      }),
    );
}
