import { useState } from "react";
import { ApiError } from "../api";

/**
 * A dialog form's check-and-send: `problems()` is the browser's own check (field messages by request name, from
 * the server's schema); it shows from the first submit on and follows every change after it. `submit(send)`
 * runs `send` when nothing is wrong, with `busy` set; a refusal becomes `error`, and `fieldError(param)` gives
 * a field its message (the browser's, else the server's when it names that field); `formError` is the refusal
 * when it names none of `fields` (the request fields with an input), shown above the buttons, else null.
 */
export function useCheckedForm(problems: () => Record<string, string>, fields: ReadonlySet<string>) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [checked, setChecked] = useState(false);
  const invalid = checked ? problems() : {};
  const fieldError = (param: string) =>
    invalid[param] ?? (error?.param === param ? error.message : undefined);
  const submit = (send: () => Promise<void>) => async (event: React.FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(problems()).length > 0) return;
    setBusy(true);
    setError(null);
    try {
      await send();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, String(e), null));
      setBusy(false);
    }
  };
  const formError = error !== null && !fields.has(error.param ?? "") ? error : null;
  return { busy, fieldError, formError, submit };
}
