import type { ApiKeyRecord, ProjectRecord } from "../app/project-store";
import type { ProjectAdmin } from "../app/project-admin";

export const USAGE = `Usage: npm run cli -- <command> [--json]

  projects create <name>              create a project
  projects list                       list projects
  keys create <project> [--label L]   create an API key (shown once) for a project (id or name)
  keys list <project>                 list a project's keys (prefixes only)
  keys revoke <key id>                revoke a key; gateways stop accepting it within moments

Environment: DATABASE_URL (the gateway's database).`;

export class UsageError extends Error {
  override name = "UsageError";
}

export interface CliOutput {
  /** Lines for people, or one JSON value with --json. */
  text: string[];
  json: unknown;
}

const date = (d: Date | null) => (d ? d.toISOString() : "-");
const projectLine = (p: ProjectRecord) => `${p.id}  ${p.name}  created ${date(p.createdAt)}`;
const keyLine = (k: ApiKeyRecord) =>
  `${k.id}  ${k.prefix}…  ${k.label || "-"}  created ${date(k.createdAt)}${k.revokedAt ? `  REVOKED ${date(k.revokedAt)}` : ""}`;

/** Runs one CLI command against the project use cases. */
export async function runCommand(admin: ProjectAdmin, args: string[], label: string | undefined): Promise<CliOutput> {
  const [group, action, arg] = args;
  const need = (what: string) => {
    if (!arg) throw new UsageError(`missing ${what}`);
    return arg;
  };
  switch (`${group} ${action}`) {
    case "projects create": {
      const project = await admin.createProject(need("<name>"));
      return { text: [projectLine(project)], json: project };
    }
    case "projects list": {
      const projects = await admin.listProjects();
      return { text: projects.length ? projects.map(projectLine) : ["(no projects)"], json: projects };
    }
    case "keys create": {
      const { key, plainKey } = await admin.createApiKey(need("<project>"), label ?? "");
      return {
        text: [keyLine(key), "", `API key (shown once, store it now): ${plainKey}`],
        json: { ...key, plainKey },
      };
    }
    case "keys list": {
      const keys = await admin.listApiKeys(need("<project>"));
      return { text: keys.length ? keys.map(keyLine) : ["(no keys)"], json: keys };
    }
    case "keys revoke": {
      const keyId = need("<key id>");
      await admin.revokeApiKey(keyId);
      return { text: [`revoked ${keyId}`], json: { revoked: keyId } };
    }
    default:
      throw new UsageError(group ? `unknown command: ${args.join(" ")}` : "no command given");
  }
}
