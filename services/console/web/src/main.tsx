import "@mantine/core/styles.css";
import { createTheme, MantineProvider } from "@mantine/core";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { AdminLogin } from "./AdminLogin";
import { App } from "./App";

const theme = createTheme({ primaryColor: "blue", defaultRadius: "md" });
const root = document.getElementById("root");
if (root === null) throw new Error("#root missing");

createRoot(root).render(
  <StrictMode>
    <MantineProvider theme={theme}>
      {window.location.pathname === "/admin/login" ? <AdminLogin /> : <App />}
    </MantineProvider>
  </StrictMode>,
);
