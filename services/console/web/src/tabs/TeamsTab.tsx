import { Badge, Button, Card, Group, Stack, Table, Text } from "@mantine/core";
import { useState } from "react";
import type { ConsoleTeam, Me, TeamAccess } from "../api";
import { BudgetBar } from "../components/BudgetBar";
import { ColumnHeads } from "../components/ColumnHeads";
import { Loaded } from "../components/Loaded";
import { Notice } from "../components/Notice";
import { TeamFormModal } from "../components/TeamFormModal";
import { budget, perMinute, usd } from "../format";
import { useFetch } from "../useFetch";
import { TeamPanel } from "./TeamPanel";

/** How the console names a role in a team. */
export const ACCESS_LABELS: Record<TeamAccess, string> = {
  operator: "Console admin",
  admin: "Team admin",
  user: "Member",
};

/** A team's name as shown: its alias, else its id. */
export const teamName = (t: ConsoleTeam): string => t.team_alias ?? t.team_id;

/**
 * Teams: the teams the signed-in user belongs to (administrators: every team), each with its spend against its
 * budget; opening one shows {@link TeamPanel} (and moves the focus to it). Administrators create teams here.
 */
export function TeamsTab({ me }: { me: Me }) {
  const teams = useFetch<{ teams: ConsoleTeam[] }>("/api/teams");
  const [openId, setOpenId] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const changed = (message: string | null) => {
    if (message !== null) setNotice(message);
    teams.reload();
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Text size="sm" c="dimmed" maw={560}>
          A team shares a budget, rate limits and models; its admins add members, set what each member may
          spend and make keys for the team's services.
        </Text>
        {me.is_admin && <Button onClick={() => setCreating(true)}>New team</Button>}
      </Group>
      {notice !== null && <Notice title={notice} onClose={() => setNotice(null)} />}
      <Card withBorder radius="md" p={0}>
        <Loaded result={teams} what="your teams">
          {(data) =>
            data.teams.length === 0 ? (
              <Text c="dimmed" ta="center" py="xl">
                {me.is_admin ? "No teams yet." : "You are not in a team yet; a team admin can add you."}
              </Text>
            ) : (
              <TeamTable teams={data.teams} onOpen={setOpenId} />
            )
          }
        </Loaded>
      </Card>
      {openId !== null && (
        <TeamPanel
          key={openId}
          me={me}
          teamId={openId}
          onChange={changed}
          onDeleted={(name) => {
            setOpenId(null);
            changed(`Team ${name} deleted; its keys were revoked.`);
          }}
        />
      )}
      {creating && (
        <TeamFormModal
          onClose={(saved) => {
            setCreating(false);
            if (saved !== null) changed(`Team ${saved} created.`);
          }}
        />
      )}
    </Stack>
  );
}

/** The teams as a table: name, the session's role, members, spend against budget, limits, and Open. */
function TeamTable({ teams, onOpen }: { teams: ConsoleTeam[]; onOpen: (teamId: string) => void }) {
  return (
    <Table.ScrollContainer minWidth={640}>
      <Table verticalSpacing="sm">
        <ColumnHeads
          columns={["Team", "Your role", { label: "Members", right: true }, "Spend", "Limits"]}
          actions
        />
        <Table.Tbody>
          {teams.map((t) => (
            <Table.Tr key={t.team_id}>
              <Table.Th scope="row" fw={500}>
                {teamName(t)}{" "}
                {t.blocked && (
                  <Badge color="red" variant="light" c="dark.8">
                    blocked
                  </Badge>
                )}
              </Table.Th>
              <Table.Td>{t.access == null ? "—" : ACCESS_LABELS[t.access]}</Table.Td>
              <Table.Td ta="right">{t.members}</Table.Td>
              <Table.Td>
                <Text size="sm">
                  {usd(t.spend)} of {budget(t.max_budget, t.budget_duration)}
                </Text>
                <BudgetBar
                  spend={t.spend}
                  maxBudget={t.max_budget}
                  size="xs"
                  testId={`team-budget-${t.team_id}`}
                />
              </Table.Td>
              <Table.Td>
                <Text size="sm">
                  {perMinute(t.rpm_limit, "requests")}, {perMinute(t.tpm_limit, "tokens")}
                </Text>
              </Table.Td>
              <Table.Td ta="right">
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => onOpen(t.team_id)}
                  aria-label={`Open team ${teamName(t)}`}
                >
                  Open
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
