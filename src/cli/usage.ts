import { type Command, Help, type Option } from "commander";

/**
 * How the CLI answers a command line it cannot take: the error, one usage line and where the full help is
 * (`segops backfill --help`), not the whole help (fifty lines that bury the one missing option). Help marks
 * the options a command cannot run without. Light: commander only, as registration is.
 */

/** `segops dlq show`: the command as typed. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** `segops backfill <template> --from <date> --to <date> [options]`: what must be typed, then the rest. */
export function usageLine(cmd: Command): string {
  const hasSubcommands = cmd.commands.length > 0;
  const args = cmd.registeredArguments.map((a) => {
    const name = `${a.name()}${a.variadic ? "..." : ""}`;
    return a.required ? `<${name}>` : `[${name}]`;
  });
  const required = cmd.options
    .filter((o) => o.mandatory && !o.hidden)
    .map((o) => o.flags.replace(/^-\w, /, ""));
  const optional = cmd.options.some((o) => !o.mandatory && !o.hidden) ? ["[options]"] : [];
  return [commandPath(cmd), ...(hasSubcommands ? ["<command>"] : []), ...args, ...required, ...optional].join(
    " ",
  );
}

/** Every command of the program, the program first. */
function allCommands(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(allCommands)];
}

/** After an error (a missing option, an unknown flag): the usage line and the help to read, per command. */
export function shortUsageAfterErrors(program: Command): void {
  for (const cmd of allCommands(program)) {
    const line = usageLine(cmd);
    // The help's own "Usage:" line says the same, required options included.
    cmd.usage(line.slice(commandPath(cmd).length + 1));
    cmd.showHelpAfterError(`usage: ${line}\nsee ${commandPath(cmd)} --help`);
  }
}

/** Help's option descriptions, a required one marked so. Set on the program before commands are added. */
export const helpConfiguration = {
  optionDescription(this: Help, option: Option): string {
    const text = Help.prototype.optionDescription.call(this, option);
    return option.mandatory ? `${text} (required)` : text;
  },
};
