import { Alert, AppShell, Button, Container, Group, Loader, Tabs, Text, Title } from "@mantine/core";
import { useCallback, useEffect, useState } from "react";
import { api, type Me, setCsrfToken } from "./api";
import { BudgetWarning } from "./components/BudgetWarning";
import { AdminTab } from "./tabs/AdminTab";
import { AllKeysTab } from "./tabs/AllKeysTab";
import { AuditTab } from "./tabs/AuditTab";
import { KeysTab } from "./tabs/KeysTab";
import { ProfileTab } from "./tabs/ProfileTab";
import { TeamsTab } from "./tabs/TeamsTab";
import { UsageTab } from "./tabs/UsageTab";

type Tab = "profile" | "usage" | "keys" | "teams" | "admin" | "all-keys" | "audit";
const TABS: readonly Tab[] = ["profile", "usage", "keys", "teams", "admin", "all-keys", "audit"];
/** Each tab's name, as its tab and the page title say it. */
const TAB_NAMES: Record<Tab, string> = {
  profile: "Profile",
  usage: "Usage",
  keys: "API keys",
  teams: "Teams",
  admin: "Admin",
  "all-keys": "All keys",
  audit: "Audit",
};
const tabFromPath = (path: string): Tab => {
  const name = path.replace(/^\//, "");
  return TABS.find((t) => t === name) ?? "profile";
};

/**
 * The tab shown for `tab`: operators see only the administrators' tabs and Teams, others no admin tab unless
 * admins.
 */
function currentTab(me: Me, tab: Tab): Tab {
  const operator = me.kind === "operator";
  const adminTab = tab === "admin" || tab === "all-keys" || tab === "audit";
  return operator
    ? adminTab || tab === "teams"
      ? tab
      : "admin"
    : adminTab && !me.is_admin
      ? "profile"
      : tab;
}

/** The console: who is signed in, a budget warning on every tab, and the tabs (Admin for administrators). */
export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tab, setTab] = useState<Tab>(tabFromPath(window.location.pathname));

  const loadMe = useCallback(() => {
    setError(null);
    api<Me>("GET", "/api/me").then(
      (m) => {
        setCsrfToken(m.csrf_token);
        setMe(m);
      },
      (e: Error) =>
        setError(e instanceof TypeError ? "The console did not answer; check your connection." : e.message),
    );
  }, []);
  useEffect(loadMe, [loadMe]);
  // Each tab its own page title ("Usage · Key console"), for the browser's tabs, history and screen readers.
  useEffect(() => {
    document.title = me === null ? "Key console" : `${TAB_NAMES[currentTab(me, tab)]} · Key console`;
  }, [me, tab]);
  useEffect(() => {
    const onPop = () => setTab(tabFromPath(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);

  const go = (value: string | null) => {
    const next = tabFromPath(`/${value ?? "profile"}`);
    setTab(next);
    window.history.pushState(null, "", `/${next}`);
  };

  const logout = async () => {
    await api("POST", "/api/logout");
    window.location.assign(me?.kind === "operator" ? "/admin/login" : (me?.chat_url ?? "/"));
  };

  if (me === null) {
    return (
      <Container py="xl">
        {error === null ? (
          <Loader />
        ) : (
          <Alert color="red" title="The console could not load">
            <Text size="sm" mb="sm">
              {error}
            </Text>
            <Button size="xs" variant="default" onClick={loadMe}>
              Retry
            </Button>
          </Alert>
        )}
      </Container>
    );
  }
  const operator = me.kind === "operator";
  const current = currentTab(me, tab);

  return (
    <AppShell header={{ height: 56 }} padding="md">
      <AppShell.Header>
        <Container size="lg" h="100%">
          <Group h="100%" justify="space-between" wrap="nowrap">
            <Title order={1} size="h4" style={{ whiteSpace: "nowrap" }}>
              Key console
            </Title>
            <Group gap="sm" wrap="nowrap" miw={0}>
              <Text size="sm" c="dimmed" truncate maw={{ base: 110, sm: 260 }} title={me.email ?? undefined}>
                {me.email ?? "operator"}
              </Text>
              <Button size="xs" variant="default" onClick={logout} style={{ flexShrink: 0 }}>
                Sign out
              </Button>
            </Group>
          </Group>
        </Container>
      </AppShell.Header>
      <AppShell.Main>
        <Container size="lg" px={0}>
          {me.provisioning_error !== null && (
            <Alert
              color="red"
              title="Your gateway account could not be set up"
              mb="md"
              data-testid="provisioning-error"
            >
              {me.provisioning_error.message}. Reload the page to try again once it is fixed.
            </Alert>
          )}
          <BudgetWarning account={me.account} />
          <Tabs value={current} onChange={go} keepMounted={false}>
            <Tabs.List mb="md">
              {!operator && <Tabs.Tab value="profile">Profile</Tabs.Tab>}
              {!operator && <Tabs.Tab value="usage">Usage</Tabs.Tab>}
              {!operator && <Tabs.Tab value="keys">API keys</Tabs.Tab>}
              <Tabs.Tab value="teams">Teams</Tabs.Tab>
              {me.is_admin && <Tabs.Tab value="admin">Admin</Tabs.Tab>}
              {me.is_admin && <Tabs.Tab value="all-keys">All keys</Tabs.Tab>}
              {me.is_admin && <Tabs.Tab value="audit">Audit</Tabs.Tab>}
            </Tabs.List>
            {!operator && (
              <>
                <Tabs.Panel value="profile">
                  <ProfileTab me={me} />
                </Tabs.Panel>
                <Tabs.Panel value="usage">
                  <UsageTab />
                </Tabs.Panel>
                <Tabs.Panel value="keys">
                  <KeysTab me={me} onChange={loadMe} />
                </Tabs.Panel>
              </>
            )}
            <Tabs.Panel value="teams">
              <TeamsTab me={me} />
            </Tabs.Panel>
            {me.is_admin && (
              <Tabs.Panel value="admin">
                <AdminTab me={me} />
              </Tabs.Panel>
            )}
            {me.is_admin && (
              <Tabs.Panel value="all-keys">
                <AllKeysTab />
              </Tabs.Panel>
            )}
            {me.is_admin && (
              <Tabs.Panel value="audit">
                <AuditTab />
              </Tabs.Panel>
            )}
          </Tabs>
        </Container>
      </AppShell.Main>
    </AppShell>
  );
}
