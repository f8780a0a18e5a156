import { readFileSync } from "node:fs";

export interface Instruction {
  /** Upper-case: `RUN`, `COPY`, ... */
  keyword: string;
  /** The rest, continuation lines joined. */
  args: string;
}

export interface Stage {
  name: string;
  /** The image or stage it is built on, with `${ARG}`s replaced by their defaults. */
  from: string;
  instructions: Instruction[];
}

/**
 * Just enough of the Dockerfile syntax to check a file's invariants where no Docker engine runs: comment lines
 * dropped, `\` continuations joined, instructions grouped into stages.
 */
export function parseDockerfile(path: string): Stage[] {
  const logical = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const defaults = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args] = line.match(/^(\S+)\s*(.*)$/)!;
    const upper = keyword.toUpperCase();
    if (upper === "ARG" && stages.length === 0) {
      const [name, value = ""] = args.split("=", 2);
      defaults.set(name, value);
    } else if (upper === "FROM") {
      const [image, , name] = args.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}/g, (_, arg) => defaults.get(arg) ?? "");
      stages.push({ name: name ?? String(stages.length), from, instructions: [] });
    } else stages.at(-1)?.instructions.push({ keyword: upper, args });
  }
  return stages;
}

/** A stage's instructions, those of the stages it is built on first: what the image it makes is set up with. */
export function effectiveInstructions(stages: Stage[], name: string): Instruction[] {
  const stage = stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage ${name}`);
  const base = stages.some((s) => s.name === stage.from) ? effectiveInstructions(stages, stage.from) : [];
  return [...base, ...stage.instructions];
}

/** The image a stage starts from at the bottom of its chain of stages. */
export function baseImage(stages: Stage[], name: string): string {
  const from = stages.find((s) => s.name === name)!.from;
  return stages.some((s) => s.name === from) ? baseImage(stages, from) : from;
}

/** The last instruction of a kind (the one in force), or undefined. */
export const last = (instructions: Instruction[], keyword: string) =>
  instructions.filter((i) => i.keyword === keyword).at(-1);

/** `CMD ["a", "b"]` (exec form) → ["a", "b"]; `HEALTHCHECK --interval=... CMD [...]` likewise. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf("["));
  return JSON.parse(json);
}
