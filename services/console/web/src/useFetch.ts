import { useCallback, useEffect, useState } from "react";
import { api } from "./api";

/** GETs `path` (again when `path` changes or `reload()` is called): `{data, error, loading, reload}`. */
export function useFetch<T>(path: string | null) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick forces a reload
  useEffect(() => {
    if (path === null) return;
    let live = true;
    setLoading(true);
    api<T>("GET", path).then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
        setLoading(false);
      },
      (e: Error) => {
        if (!live) return;
        // fetch's own wording for a network failure says nothing to a person.
        setError(e instanceof TypeError ? "The console did not answer; check your connection." : e.message);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}
