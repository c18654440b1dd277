/**
 * The console's team forms, checked with the same schemas in the browser and on the console's server (as
 * limit-input.ts does for limits): the fields in LiteLLM's names (`team_alias`, `max_budget` USD,
 * `budget_duration`, `rpm_limit`, `tpm_limit`, `models`, `max_budget_in_team` USD), the messages the console's own.
 */
import { z } from "zod";
import { modelList, objectPermission } from "./fields.js";
import { budgetInput, limitInputFields, withBudgetForPeriod } from "./limit-input.js";
import { teamRole } from "./teams.js";

/** A team's name as typed: 1..64 characters. */
const teamAlias = z
  .string({ error: "Enter a name for the team." })
  .trim()
  .min(1, { error: "Enter a name for the team." })
  .max(64, { error: "A team name has at most 64 characters." });

/** A console user's e-mail address as typed. */
export const memberEmail = z
  .string({ error: "Enter the e-mail address of a console user." })
  .trim()
  .toLowerCase()
  .pipe(z.email({ error: "Enter an e-mail address, e.g. ada@example.com." }));

/**
 * The operator's new-team form (`POST /api/teams`): name, limits (omitted or null: none), `models` (omitted or
 * empty: every model), optionally the e-mail of the team's first admin, and the team's MCP grants
 * (`object_permission`, LiteLLM's: the MCP servers and tools its keys may reach; omitted or null: none).
 */
export const teamInput = withBudgetForPeriod(
  z.object({
    team_alias: teamAlias,
    ...limitInputFields,
    models: modelList.optional(),
    admin_email: memberEmail.optional(),
    object_permission: objectPermission.nullish(),
  }),
);
export type TeamInput = z.input<typeof teamInput>;

/**
 * The operator's team edit (`POST /api/teams/:teamId`): omitted unchanged, a limit null cleared, models null or
 * empty: every model, `object_permission` null: no MCP grant.
 */
export const teamEditInput = withBudgetForPeriod(
  z.object({
    team_alias: teamAlias.optional(),
    ...limitInputFields,
    models: modelList.nullish(),
    object_permission: objectPermission.nullish(),
  }),
);
export type TeamEditInput = z.input<typeof teamEditInput>;

/** A member's budget in the team (USD per the team's budget period; null: none beyond the team's). */
const memberBudget = { max_budget_in_team: budgetInput.nullish() };

/** The team admin's add-member form (`POST /api/teams/:teamId/members`). */
export const teamMemberInput = z.object({
  user_email: memberEmail,
  role: teamRole.default("user"),
  ...memberBudget,
});
export type TeamMemberInput = z.input<typeof teamMemberInput>;

/** The team admin's member edit (`POST /api/teams/:teamId/members/:userId`): omitted unchanged, null cleared. */
export const teamMemberEditInput = z.object({ role: teamRole.optional(), ...memberBudget });
