import type { Command } from "commander";
import type { gateway } from "@bas/proto";
import type { Clients } from "../clients";
import { date, type Output } from "../output";
import { resolveProject } from "../project-ref";

type Run = (action: () => Promise<Output>) => Promise<void>;

const projectLine = (p: gateway.Project) => `${p.id}  ${p.name}  created ${date(p.createdAt)}`;
const keyLine = (k: gateway.ApiKey) =>
  `${k.id}  ${k.prefix}…  ${k.label || "-"}  created ${date(k.createdAt)}${k.revokedAt ? `  REVOKED ${date(k.revokedAt)}` : ""}`;

export function addProjectCommands(program: Command, clients: Clients, run: Run): void {
  const projects = program.command("projects").description("projects: each has its own sessions, browsers and keys");
  projects
    .command("list")
    .description("list the projects")
    .action(() =>
      run(async () => {
        const { projects: all } = await clients.projects().listProjects({});
        return { text: all.length ? all.map(projectLine) : ["(no projects)"], json: all };
      }),
    );
  projects
    .command("create <name>")
    .description("create a project")
    .action((name: string) =>
      run(async () => {
        const project = await clients.projects().createProject({ name });
        return { text: [projectLine(project)], json: project };
      }),
    );
  projects
    .command("show <project>")
    .description("one project, by name or id")
    .action((ref: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        return { text: [projectLine(project)], json: project };
      }),
    );

  const keys = program.command("api-keys").description("the API keys callers send as X-Service-API-Key");
  keys
    .command("create <project>")
    .description("create an API key for a project (shown once)")
    .option("--label <label>", "a note to tell keys apart", "")
    .action((ref: string, options: { label: string }) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const created = await clients.projects().createApiKey({ projectId: project.id, label: options.label });
        return {
          text: [keyLine(created.key!), "", `API key (shown once, store it now): ${created.plainKey}`],
          json: created,
        };
      }),
    );
  keys
    .command("list <project>")
    .description("a project's keys (prefixes only)")
    .action((ref: string) =>
      run(async () => {
        const project = await resolveProject(clients, ref);
        const { keys: all } = await clients.projects().listApiKeys({ projectId: project.id });
        return { text: all.length ? all.map(keyLine) : ["(no keys)"], json: all };
      }),
    );
  keys
    .command("revoke <keyId>")
    .description("revoke a key; gateways stop accepting it within moments")
    .action((keyId: string) =>
      run(async () => {
        await clients.projects().revokeApiKey({ keyId });
        return { text: [`revoked ${keyId}`], json: { revoked: keyId } };
      }),
    );
}
