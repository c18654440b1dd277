import {
  Alert,
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
} from "@mantine/core";
import { useEffect, useState } from "react";
import { ApiError, api, type CreatedKey, type Me } from "../api";
import { budget, count, perMinute, usd } from "../format";
import { KeySnippets } from "./KeySnippets";

/** The budget periods offered (LiteLLM durations), also in the admin's Limits dialog. */
export const PERIODS = [
  { value: "", label: "No period (total)" },
  { value: "1d", label: "Per day" },
  { value: "7d", label: "Per week" },
  { value: "30d", label: "Per 30 days" },
  { value: "1mo", label: "Per calendar month" },
];
const EXPIRIES = [
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" },
  { value: "90d", label: "90 days" },
  { value: "180d", label: "180 days" },
  { value: "365d", label: "1 year" },
];

const orNull = (v: string | number) => (v === "" ? undefined : Number(v));
/** Fields whose server errors show under the field itself (and only there). */
const FIELDS = new Set([
  "name",
  "max_budget",
  "budget_duration",
  "rpm_limit",
  "tpm_limit",
  "duration",
  "models",
]);
const upTo = (max: number | null | undefined, show: (n: number) => string = count) =>
  max == null ? "unlimited" : `up to ${show(max)}`;

/**
 * The generate-key dialog: name, optional budget and period, rpm/tpm, expiry (default 90 days), models; the
 * account's limits are shown as hints. A looser value is sent as typed: the server refuses it and its
 * message shows under the field (a value is never silently lowered). After creation it shows the key once,
 * with its own Copy button and snippets, until "I've saved it".
 */
export function GenerateKeyModal({
  me,
  opened,
  onClose,
}: {
  me: Me;
  opened: boolean;
  onClose: (created: boolean) => void;
}) {
  const account = me.account;
  const [name, setName] = useState("");
  const [maxBudget, setMaxBudget] = useState<string | number>("");
  const [period, setPeriod] = useState<string | null>("");
  const [rpm, setRpm] = useState<string | number>("");
  const [tpm, setTpm] = useState<string | number>("");
  const [expiry, setExpiry] = useState<string | null>("90d");
  const [models, setModels] = useState<string[]>([]);
  const [available, setAvailable] = useState<string[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);

  useEffect(() => {
    if (!opened) return;
    api<{ models: string[] }>("GET", "/api/models").then(
      (r) => setAvailable(r.models),
      () => setAvailable([]),
    );
  }, [opened]);

  const reset = () => {
    setName("");
    setMaxBudget("");
    setPeriod("");
    setRpm("");
    setTpm("");
    setExpiry("90d");
    setModels([]);
    setError(null);
    setCreated(null);
  };
  const close = () => {
    const wasCreated = created !== null;
    reset();
    onClose(wasCreated);
  };

  const submit = async (event?: React.FormEvent) => {
    event?.preventDefault();
    if (name.trim() === "" || busy) return;
    setBusy(true);
    setError(null);
    try {
      const key = await api<CreatedKey>("POST", "/api/keys", {
        name: name.trim(),
        max_budget: orNull(maxBudget),
        budget_duration: period === "" || period === null ? undefined : period,
        rpm_limit: orNull(rpm),
        tpm_limit: orNull(tpm),
        duration: expiry ?? "90d",
        models: models.length === 0 ? undefined : models,
      });
      setCreated(key);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, (e as Error).message, null));
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (param: string) => (error?.param === param ? error.message : undefined);
  const formError = error !== null && !FIELDS.has(error.param ?? "") ? error : null;

  if (created !== null) {
    return (
      <Modal
        opened={opened}
        onClose={() => {}}
        withCloseButton={false}
        closeOnClickOutside={false}
        closeOnEscape={false}
        size="xl"
        title="Your new key"
        centered
      >
        <Stack>
          <Alert color="yellow" title="Copy it now">
            This is the only time the full key is shown. The console does not keep it; if you lose it, revoke
            it and generate a new one.
          </Alert>
          <Group gap="xs" align="stretch" wrap="nowrap">
            <Code
              block
              data-testid="new-key"
              fz="md"
              aria-label="Your new key"
              style={{ flex: 1, whiteSpace: "pre-wrap", wordBreak: "break-all", userSelect: "all" }}
            >
              {created.key}
            </Code>
            <CopyButton value={created.key}>
              {({ copied, copy }) => (
                <Button onClick={copy} color={copied ? "teal" : undefined} aria-label="Copy key" miw={92}>
                  {copied ? "Copied" : "Copy key"}
                </Button>
              )}
            </CopyButton>
          </Group>
          <KeySnippets
            gatewayUrl={me.gateway_url}
            apiKey={created.key}
            model={created.models[0] ?? available[0] ?? "general"}
          />
          <Group justify="flex-end">
            <Button onClick={close}>I've saved it</Button>
          </Group>
        </Stack>
      </Modal>
    );
  }

  return (
    <Modal opened={opened} onClose={close} title="Generate a key" size="lg" centered>
      <form onSubmit={submit}>
        <Stack gap="sm">
          {account !== null && (
            <Text size="sm" c="dimmed" data-testid="account-limits">
              Your account: budget {budget(account.max_budget, account.budget_duration)},{" "}
              {perMinute(account.rpm_limit, "requests")}, {perMinute(account.tpm_limit, "tokens")}. A key's
              limits can only be tighter.
            </Text>
          )}
          <TextInput
            label="Name"
            placeholder="e.g. laptop, ci-pipeline"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError("name")}
            data-autofocus
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <NumberInput
              label="Budget (USD, optional)"
              min={0}
              decimalScale={2}
              placeholder={upTo(account?.max_budget, usd)}
              value={maxBudget}
              onChange={setMaxBudget}
              error={fieldError("max_budget")}
            />
            <Select
              label="Budget period"
              data={PERIODS}
              value={period}
              onChange={setPeriod}
              allowDeselect={false}
              error={fieldError("budget_duration")}
            />
            <NumberInput
              label="Requests per minute"
              min={0}
              allowDecimal={false}
              value={rpm}
              onChange={setRpm}
              placeholder={upTo(account?.rpm_limit)}
              error={fieldError("rpm_limit")}
            />
            <NumberInput
              label="Tokens per minute"
              min={0}
              allowDecimal={false}
              value={tpm}
              onChange={setTpm}
              placeholder={upTo(account?.tpm_limit)}
              error={fieldError("tpm_limit")}
            />
            <Select
              label="Expires after"
              data={EXPIRIES}
              value={expiry}
              onChange={setExpiry}
              allowDeselect={false}
              error={fieldError("duration")}
            />
            <MultiSelect
              label="Models"
              placeholder={models.length === 0 ? "all models" : undefined}
              data={available}
              value={models}
              onChange={setModels}
              clearable
              error={fieldError("models")}
            />
          </SimpleGrid>
          {formError !== null && (
            <Alert color="red" title="Not generated">
              {formError.message}
            </Alert>
          )}
          <Group justify="flex-end" mt="sm">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={busy} disabled={name.trim() === ""}>
              Generate
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
