import "@mantine/core/styles.css";
import { type CSSVariablesResolver, createTheme, MantineProvider, Modal } from "@mantine/core";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AdminLogin } from "./AdminLogin";
import { App } from "./App";

// Shade 8 of blue (#1971c2) carries white text at 4.6:1 and gray 7 (#495057) for "dimmed" text 8:1, both
// above WCAG AA's 4.5:1; Mantine's defaults (blue 6, gray 6) fall short.
const theme = createTheme({
  primaryColor: "blue",
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: "md",
  // Every dialog's × has a name for screen readers.
  components: { Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close" } } }) },
});
const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: { "--mantine-color-dimmed": "var(--mantine-color-gray-7)" },
  dark: {},
});
const root = document.getElementById("root");
if (root === null) throw new Error("#root missing");

createRoot(root).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables}>
      {window.location.pathname === "/admin/login" ? <AdminLogin /> : <App />}
    </MantineProvider>
  </StrictMode>,
);
