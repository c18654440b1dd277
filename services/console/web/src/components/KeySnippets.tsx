import { Button, Code, CopyButton, Group, Tabs } from "@mantine/core";

/** How to call the gateway with a key, in curl, Python (openai) and JavaScript (openai). */
export function snippets(gatewayUrl: string, key: string, model: string) {
  const base = `${gatewayUrl}/v1`;
  return {
    curl: `curl ${base}/chat/completions \\
  -H "Authorization: Bearer ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    python: `from openai import OpenAI

client = OpenAI(base_url="${base}", api_key="${key}")
reply = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello"}],
)
print(reply.choices[0].message.content)`,
    javascript: `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${base}", apiKey: "${key}" });
const reply = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello" }],
});
console.log(reply.choices[0].message.content);`,
  };
}

/** The three snippets in tabs, each with a copy button. */
export function KeySnippets({
  gatewayUrl,
  apiKey,
  model,
}: {
  gatewayUrl: string;
  apiKey: string;
  model: string;
}) {
  const all = snippets(gatewayUrl, apiKey, model);
  const labels = { curl: "curl", python: "Python", javascript: "JavaScript" } as const;
  return (
    <Tabs defaultValue="curl" keepMounted>
      <Tabs.List>
        {Object.entries(labels).map(([value, label]) => (
          <Tabs.Tab key={value} value={value}>
            {label}
          </Tabs.Tab>
        ))}
      </Tabs.List>
      {(Object.keys(labels) as Array<keyof typeof labels>).map((value) => (
        <Tabs.Panel key={value} value={value} pt="xs">
          <Code
            block
            data-testid={`snippet-${value}`}
            style={{ whiteSpace: "pre-wrap", wordBreak: "break-all" }}
          >
            {all[value]}
          </Code>
          <Group justify="flex-end" mt={4}>
            <CopyButton value={all[value]}>
              {({ copied, copy }) => (
                <Button size="xs" variant="subtle" onClick={copy}>
                  {copied ? "Copied" : "Copy"}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Tabs.Panel>
      ))}
    </Tabs>
  );
}
