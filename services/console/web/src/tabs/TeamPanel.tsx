import { Badge, Button, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { api, type ConsoleKey, type Me, type TeamDetail } from "../api";
import { BudgetBar } from "../components/BudgetBar";
import { ConfirmButton } from "../components/ConfirmButton";
import { GenerateKeyModal } from "../components/GenerateKeyModal";
import { Loaded } from "../components/Loaded";
import { TeamFormModal } from "../components/TeamFormModal";
import { Stat } from "../components/UsageStats";
import { budget, perMinute, usd } from "../format";
import { useFetch } from "../useFetch";
import { KeyTable } from "./KeyTable";
import { TeamMembers } from "./TeamMembers";
import { TeamSpendView } from "./TeamSpendView";
import { ACCESS_LABELS, teamName } from "./TeamsTab";

/**
 * One team: its budget, limits and models, and the signed-in user's share; for its admins (and administrators)
 * its members, its service keys (generate, revoke) and its spend by member, key and model; for administrators
 * also Edit, Block/Unblock and Delete. Its heading takes the focus when it opens. `onChange(message)` reports a
 * change (the list reloads, a notice shows).
 */
export function TeamPanel({
  me,
  teamId,
  onChange,
  onDeleted,
}: {
  me: Me;
  teamId: string;
  onChange: (message: string | null) => void;
  onDeleted: (name: string) => void;
}) {
  const path = `/api/teams/${encodeURIComponent(teamId)}`;
  const detail = useFetch<TeamDetail>(path);
  const heading = useRef<HTMLHeadingElement>(null);
  const loaded = detail.data !== null;
  useEffect(() => {
    if (loaded) heading.current?.focus();
  }, [loaded]);
  // Bumped by every change, so the spend view reads again (a new key, a new member).
  const [version, setVersion] = useState(0);
  const [days, setDays] = useState("30");
  const changed = (message: string | null) => {
    detail.reload();
    setVersion((v) => v + 1);
    onChange(message);
  };
  return (
    <Card withBorder radius="md">
      <Loaded result={detail} what="the team">
        {(data) => (
          <Stack>
            <Group justify="space-between">
              <Title order={2} size="h4" ref={heading} tabIndex={-1}>
                Team {teamName(data.team)}{" "}
                {data.team.blocked && (
                  <Badge color="red" variant="light" c="dark.8">
                    blocked
                  </Badge>
                )}
              </Title>
              <Text size="sm" c="dimmed">
                Your role: {ACCESS_LABELS[data.access]}
              </Text>
            </Group>
            {data.access === "operator" && (
              <OperatorActions detail={data} path={path} onChange={changed} onDeleted={onDeleted} />
            )}
            <TeamSummary detail={data} />
            {data.members !== null && (
              <TeamMembers
                teamId={teamId}
                members={data.members}
                budgetPeriod={data.team.budget_duration}
                onChange={changed}
              />
            )}
            {data.keys !== null && <TeamKeys me={me} detail={data} onChange={changed} />}
            {data.access !== "user" && (
              <TeamSpendView key={version} teamId={teamId} days={days} onDays={setDays} />
            )}
          </Stack>
        )}
      </Loaded>
    </Card>
  );
}

/** The team's spend against its budget, its limits and models, and the session's own share. */
function TeamSummary({ detail }: { detail: TeamDetail }) {
  const { team, membership } = detail;
  return (
    <>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Stat
          label="Spend this period"
          value={`${usd(team.spend)} of ${budget(team.max_budget, team.budget_duration)}`}
        />
        <Stat
          label="Rate limits"
          value={`${perMinute(team.rpm_limit, "requests")}, ${perMinute(team.tpm_limit, "tokens")}`}
        />
        <Stat label="Models" value={team.models.length === 0 ? "all models" : team.models.join(", ")} />
      </SimpleGrid>
      <BudgetBar spend={team.spend} maxBudget={team.max_budget} testId="team-budget" />
      {membership !== null && (
        <Text size="sm" data-testid="own-share">
          Your share: {usd(membership.spend)}
          {team.spend > 0
            ? ` (${Math.round((membership.spend / team.spend) * 100)} % of the team's spend)`
            : ""}
          {membership.max_budget_in_team === null
            ? "; no budget of your own in the team."
            : `, of your budget in the team of ${usd(membership.max_budget_in_team)}.`}
        </Text>
      )}
      {membership !== null && (
        <BudgetBar spend={membership.spend} maxBudget={membership.max_budget_in_team} testId="own-budget" />
      )}
    </>
  );
}

/** The team's service keys: generate one (shown once, with snippets), revoke. */
function TeamKeys({
  me,
  detail,
  onChange,
}: {
  me: Me;
  detail: TeamDetail;
  onChange: (m: string | null) => void;
}) {
  const [generating, setGenerating] = useState(false);
  // The team's keys name their team by its alias, as All keys does (KeyTable's owner and limits columns).
  const keys = (detail.keys ?? []).map((k) => ({ ...k, team_alias: detail.team.team_alias ?? null }));
  const revoke = async (key: ConsoleKey) => {
    await api("DELETE", `/api/teams/${encodeURIComponent(detail.team.team_id)}/keys/${key.token}`);
    onChange(`Key ${key.key_alias ?? ""} (${key.key_name}) revoked.`);
  };
  return (
    <>
      <Group justify="space-between">
        <Text fw={600}>Team keys</Text>
        <Button size="xs" onClick={() => setGenerating(true)} disabled={detail.team.blocked}>
          Generate team key
        </Button>
      </Group>
      {keys.length === 0 ? (
        <Text size="sm" c="dimmed">
          No team keys yet: a team key is for a service; it is bound by the team's budget and limits.
        </Text>
      ) : (
        <KeyTable keys={keys} onRevoke={revoke} />
      )}
      <GenerateKeyModal
        me={me}
        team={detail.team}
        opened={generating}
        onClose={(created) => {
          setGenerating(false);
          if (created) onChange(null);
        }}
      />
    </>
  );
}

/** An administrator's Edit (name, limits, models), Block/Unblock and Delete of the team. */
function OperatorActions({
  detail,
  path,
  onChange,
  onDeleted,
}: {
  detail: TeamDetail;
  path: string;
  onChange: (message: string | null) => void;
  onDeleted: (name: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const name = teamName(detail.team);
  const blocked = detail.team.blocked;
  const toggle = async () => {
    await api("POST", `${path}/${blocked ? "unblock" : "block"}`);
    onChange(blocked ? `Team ${name} unblocked.` : `Team ${name} blocked: its keys are refused.`);
  };
  return (
    <Group gap="xs">
      <Button size="xs" variant="default" onClick={() => setEditing(true)}>
        Edit team
      </Button>
      <Button size="xs" variant="default" onClick={toggle}>
        {blocked ? "Unblock" : "Block"}
      </Button>
      <ConfirmButton
        label="Delete"
        ariaLabel={`Delete team ${name}`}
        question="Delete this team?"
        onConfirm={async () => {
          await api("DELETE", path);
          onDeleted(name);
        }}
      >
        Team <b>{name}</b> is deleted and its keys are revoked. This cannot be undone.
      </ConfirmButton>
      {editing && (
        <TeamFormModal
          team={detail.team}
          onClose={(saved) => {
            setEditing(false);
            if (saved !== null) onChange(`Team ${saved} saved.`);
          }}
        />
      )}
    </Group>
  );
}
