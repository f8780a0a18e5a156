/** What a command shows: lines for people, or one JSON value with --json. */
export interface Output {
  text: string[];
  json: unknown;
}

export const date = (d: Date | undefined | null) => (d ? d.toISOString() : "-");

/** Prints a command's output the way the global --json option asks. */
export function print(output: Output, json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text.join("\n")}\n`);
}
