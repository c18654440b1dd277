import { Button, Group, Table, Text } from "@mantine/core";
import { useState } from "react";
import { api, type TeamMembership } from "../api";
import { BudgetBar } from "../components/BudgetBar";
import { ColumnHeads } from "../components/ColumnHeads";
import { ConfirmButton } from "../components/ConfirmButton";
import { MemberModal } from "../components/MemberModal";
import { usd } from "../format";
import { ACCESS_LABELS } from "./TeamsTab";

/**
 * A team's members for its admins: e-mail, role, spend in the team against the member's budget, Edit (role and
 * budget) and Remove (asks first); "Add member" above. `onChange(message)` reports a change.
 */
export function TeamMembers({
  teamId,
  members,
  budgetPeriod,
  onChange,
}: {
  teamId: string;
  members: TeamMembership[];
  budgetPeriod: string | null;
  onChange: (message: string) => void;
}) {
  // The member being edited; null: the add dialog; undefined: no dialog.
  const [editing, setEditing] = useState<TeamMembership | null | undefined>(undefined);
  const name = (m: TeamMembership) => m.user_email ?? m.user_id;
  const remove = async (m: TeamMembership) => {
    await api("DELETE", `/api/teams/${encodeURIComponent(teamId)}/members/${encodeURIComponent(m.user_id)}`);
    onChange(`${name(m)} removed from the team.`);
  };
  return (
    <>
      <Group justify="space-between">
        <Text fw={600}>Members</Text>
        <Button size="xs" onClick={() => setEditing(null)}>
          Add member
        </Button>
      </Group>
      <Table.ScrollContainer
        minWidth={560}
        type="native"
        // In a narrow window it scrolls sideways: a keyboard then reaches the columns out of sight.
        tabIndex={0}
        role="region"
        aria-label="Members (table)"
      >
        <Table verticalSpacing="sm">
          <ColumnHeads columns={["Member", "Role", "Spend in the team"]} actions />
          <Table.Tbody>
            {members.map((m) => (
              <Table.Tr key={m.user_id}>
                <Table.Th scope="row" fw={400}>
                  {name(m)}
                </Table.Th>
                <Table.Td>{m.role === "admin" ? ACCESS_LABELS.admin : ACCESS_LABELS.user}</Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {usd(m.spend)}
                    {m.max_budget_in_team === null ? "" : ` of ${usd(m.max_budget_in_team)}`}
                  </Text>
                  <BudgetBar
                    spend={m.spend}
                    maxBudget={m.max_budget_in_team}
                    size="xs"
                    testId={`member-budget-${m.user_id}`}
                  />
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap" justify="flex-end">
                    <Button
                      size="xs"
                      variant="default"
                      onClick={() => setEditing(m)}
                      aria-label={`Edit ${name(m)}`}
                    >
                      Edit
                    </Button>
                    <ConfirmButton
                      label="Remove"
                      ariaLabel={`Remove ${name(m)}`}
                      question="Remove this member?"
                      onConfirm={() => remove(m)}
                    >
                      <b>{name(m)}</b> leaves the team and no longer sees it.
                    </ConfirmButton>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {editing !== undefined && (
        <MemberModal
          teamId={teamId}
          member={editing ?? undefined}
          budgetPeriod={budgetPeriod}
          onClose={(saved) => {
            setEditing(undefined);
            if (saved !== null)
              onChange(editing === null ? `${saved} added to the team.` : `${saved} saved.`);
          }}
        />
      )}
    </>
  );
}
