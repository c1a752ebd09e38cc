import { compactCommand } from "./compact/command.js";
import { killCommand } from "./kill/command.js";
import { rollbackCommand } from "./rollback/command.js";

/**
 * The CLI commands of the kinds of this build, in the order `segops --help` lists them: the same objects
 * their requests name (`KindRequest.command`), listed here apart from the registry (jobs/kinds.ts) so that
 * `segops --help` reads them without loading any kind (test/cli/kind-commands.test.ts holds the two lists
 * together).
 */
export const KIND_COMMANDS = [rollbackCommand, killCommand, compactCommand] as const;
