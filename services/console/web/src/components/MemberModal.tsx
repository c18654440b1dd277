import { Alert, Modal, Stack, TextInput } from "@mantine/core";
import { fieldErrors, teamMemberEditInput, teamMemberInput, typedNumber } from "@platform/admin-api";
import { useState } from "react";
import { api, type TeamMembership } from "../api";
import { FormButtons } from "./KeyFormFields";
import { PickOne } from "./PickOne";
import { useCheckedForm } from "./useCheckedForm";

const ROLES = [
  { value: "user", label: "Member" },
  { value: "admin", label: "Team admin (manages members and keys)" },
];
/** Request fields whose refusals show under their own input. */
const FIELDS = new Set(["user_email", "role", "max_budget_in_team"]);

/**
 * The team admin's member dialog: add a console user by e-mail with a role and a budget in the team
 * (`POST /api/teams/:teamId/members`), or, with `member`, change their role and budget (an empty budget clears
 * it). Checked with the server's schemas from the first Save on. `onClose(saved)` names the member saved.
 */
export function MemberModal({
  teamId,
  member,
  budgetPeriod,
  onClose,
}: {
  teamId: string;
  member?: TeamMembership;
  /** The team's budget period (LiteLLM duration), which a member's budget follows; null: none. */
  budgetPeriod: string | null;
  onClose: (saved: string | null) => void;
}) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<string | null>(member?.role ?? "user");
  const [budget, setBudget] = useState(
    member?.max_budget_in_team == null ? "" : String(member.max_budget_in_team),
  );
  const amount = typedNumber(budget);
  const request =
    member === undefined
      ? { user_email: email, role, max_budget_in_team: amount ?? undefined }
      : { role, max_budget_in_team: amount };
  const problems = () => fieldErrors(member === undefined ? teamMemberInput : teamMemberEditInput, request);
  const { busy, fieldError, formError, submit } = useCheckedForm(problems, FIELDS);
  const team = encodeURIComponent(teamId);
  const save = submit(async () => {
    if (member === undefined) await api("POST", `/api/teams/${team}/members`, request);
    else await api("POST", `/api/teams/${team}/members/${encodeURIComponent(member.user_id)}`, request);
    onClose(member?.user_email ?? member?.user_id ?? email.trim());
  });
  return (
    <Modal
      opened
      onClose={() => onClose(null)}
      title={member === undefined ? "Add a member" : `Member ${member.user_email ?? member.user_id}`}
      centered
    >
      <form onSubmit={save} noValidate>
        <Stack gap="sm">
          {member === undefined && (
            <TextInput
              label="E-mail"
              description="A console user (someone who has signed in to the key console once)."
              type="email"
              required
              autoComplete="off"
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              error={fieldError("user_email")}
              data-autofocus
            />
          )}
          <PickOne label="Role" data={ROLES} value={role} onChange={setRole} error={fieldError("role")} />
          <TextInput
            label="Budget in the team (USD, optional)"
            description={`What this member may spend through their keys of the team${budgetPeriod === null ? "" : ` per budget period (${budgetPeriod})`}; empty: only the team's budget.`}
            inputMode="decimal"
            autoComplete="off"
            value={budget}
            onChange={(e) => setBudget(e.currentTarget.value)}
            error={fieldError("max_budget_in_team")}
            data-autofocus={member !== undefined || undefined}
          />
          {formError !== null && <Alert color="red">{formError.message}</Alert>}
          <FormButtons
            submit={member === undefined ? "Add member" : "Save"}
            busy={busy}
            onCancel={() => onClose(null)}
          />
        </Stack>
      </form>
    </Modal>
  );
}
