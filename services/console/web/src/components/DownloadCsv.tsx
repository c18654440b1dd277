import { Button } from "@mantine/core";

/** "Download CSV": the period's requests as the server streams them (at most 1000 rows). */
export function DownloadCsv({ href }: { href: string }) {
  return (
    <Button component="a" href={href} download variant="default" size="sm">
      Download CSV
    </Button>
  );
}
