import "@mantine/core/styles.css";
import {
  Alert,
  type CSSVariablesResolver,
  createTheme,
  MantineProvider,
  Modal,
  ModalHeader,
} from "@mantine/core";
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
  components: {
    // Every dialog's × has a name for screen readers.
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close" } } }),
    // A dialog's header is no page banner: a <header> there made a second banner landmark.
    // (`component` reaches the underlying Box; ModalHeader's props type does not list it.)
    ModalHeader: ModalHeader.extend({ defaultProps: { component: "div" } as never }),
    // A light alert's title in its own colour falls short of 4.5:1 (orange 3.61:1, teal 4.32:1, yellow less):
    // titles take the text colour; the alert's colour stays in its background, border and icon.
    Alert: Alert.extend({ styles: { title: { color: "var(--mantine-color-text)" } } }),
  },
});
// Field errors in red 9 (#c92a2a, 5.6:1 on white) instead of red 6 (3.28:1). In the dark scheme (the
// system's, `prefers-color-scheme`) the light shades are the legible ones on dark 7 (#1a1b1e): gray 4 for
// "dimmed", red 4 (#ff8787) for errors; `--console-on-light` is the text on a light badge or alert.
const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    "--mantine-color-dimmed": "var(--mantine-color-gray-7)",
    "--mantine-color-error": "var(--mantine-color-red-9)",
    "--console-on-light": "var(--mantine-color-dark-8)",
  },
  dark: {
    "--mantine-color-dimmed": "var(--mantine-color-gray-4)",
    "--mantine-color-error": "var(--mantine-color-red-4)",
    "--console-on-light": "var(--mantine-color-gray-0)",
  },
});
const root = document.getElementById("root");
if (root === null) throw new Error("#root missing");

createRoot(root).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables} defaultColorScheme="auto">
      {window.location.pathname === "/admin/login" ? <AdminLogin /> : <App />}
    </MantineProvider>
  </StrictMode>,
);
