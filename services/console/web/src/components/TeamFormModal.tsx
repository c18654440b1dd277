import { Alert, Modal, SimpleGrid, Stack, TextInput } from "@mantine/core";
import { fieldErrors, teamEditInput, teamInput } from "@platform/admin-api";
import { useState } from "react";
import { api, type ConsoleTeam, type McpServer } from "../api";
import { useFetch } from "../useFetch";
import { FormButtons, ModelsSelect } from "./KeyFormFields";
import { LimitFields, limitRequest, limitValues, NO_LIMITS } from "./LimitFields";
import { grantOf, McpGrantField, permissionOf } from "./McpGrantField";
import { useCheckedForm } from "./useCheckedForm";

/** Request fields whose refusals show under their own input. */
const FIELDS = new Set([
  "team_alias",
  "admin_email",
  "max_budget",
  "budget_duration",
  "rpm_limit",
  "tpm_limit",
  "models",
]);

/**
 * The operator's team dialog: a new team (name, limits, models, the e-mail of its first admin, its MCP servers;
 * `POST /api/teams`) or, with `team`, a change of its name, limits, models and MCP servers (`POST
 * /api/teams/:teamId`; an empty limit clears it). The MCP servers and tools (LiteLLM's team `object_permission`,
 * the field the key dialogs use) are sent only when changed; no server chosen sends null. Checked in the browser with the server's schemas (`teamInput`, `teamEditInput`) from the
 * first Save on; a refusal shows under its field. `onClose(saved)` names the team saved, null when cancelled.
 */
export function TeamFormModal({
  team,
  onClose,
}: {
  team?: ConsoleTeam;
  onClose: (saved: string | null) => void;
}) {
  const [alias, setAlias] = useState(team?.team_alias ?? "");
  const [adminEmail, setAdminEmail] = useState("");
  const [limits, setLimits] = useState(team === undefined ? NO_LIMITS : limitValues(team));
  const [models, setModels] = useState<string[]>(team?.models ?? []);
  const available = useFetch<{ models: string[] }>("/api/models").data?.models ?? [];
  const mcpServers = useFetch<{ servers: McpServer[] }>("/api/admin/mcp-servers").data?.servers ?? [];
  const [grant, setGrant] = useState(grantOf(team?.object_permission ?? null));
  const [grantChanged, setGrantChanged] = useState(false);
  const mcpGrant = grantChanged ? { object_permission: permissionOf(grant) } : {};

  const request =
    team === undefined
      ? {
          team_alias: alias,
          ...limitRequest(limits, undefined),
          models: models.length === 0 ? undefined : models,
          admin_email: adminEmail.trim() === "" ? undefined : adminEmail,
          ...mcpGrant,
        }
      : { team_alias: alias, ...limitRequest(limits, null), models, ...mcpGrant };
  const problems = () => fieldErrors(team === undefined ? teamInput : teamEditInput, request);
  const { busy, fieldError, formError, submit } = useCheckedForm(problems, FIELDS);
  const save = submit(async () => {
    const path = team === undefined ? "/api/teams" : `/api/teams/${encodeURIComponent(team.team_id)}`;
    const saved = await api<ConsoleTeam>("POST", path, request);
    onClose(saved.team_alias ?? saved.team_id);
  });
  return (
    <Modal
      opened
      onClose={() => onClose(null)}
      title={team === undefined ? "New team" : `Team ${team.team_alias ?? team.team_id}`}
      size="lg"
      centered
    >
      <form onSubmit={save} noValidate>
        <Stack gap="sm">
          <TextInput
            label="Team name"
            required
            value={alias}
            onChange={(e) => setAlias(e.currentTarget.value)}
            error={fieldError("team_alias")}
            data-autofocus
          />
          {team === undefined && (
            <TextInput
              label="Team admin (e-mail, optional)"
              description="A console user who then manages the team's members and keys."
              type="email"
              autoComplete="off"
              value={adminEmail}
              onChange={(e) => setAdminEmail(e.currentTarget.value)}
              error={fieldError("admin_email")}
            />
          )}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <LimitFields
              values={limits}
              onChange={setLimits}
              budgetLabel="Team budget (USD)"
              errors={fieldError}
            />
          </SimpleGrid>
          <ModelsSelect
            models={models}
            onModels={setModels}
            available={available}
            error={fieldError("models")}
          />
          <McpGrantField
            holder="team"
            servers={mcpServers}
            grant={grant}
            onGrant={(next) => {
              setGrant(next);
              setGrantChanged(true);
            }}
          />
          {formError !== null && <Alert color="red">{formError.message}</Alert>}
          <FormButtons
            submit={team === undefined ? "Create team" : "Save"}
            busy={busy}
            onCancel={() => onClose(null)}
          />
        </Stack>
      </form>
    </Modal>
  );
}
