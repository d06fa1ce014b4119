import { QueryClientProvider, useQuery, useQueryClient } from "@tanstack/react-query";
import { Suspense, useState } from "react";
import { Redirect, Route, Router, Switch } from "wouter";
import { currentSession, SESSION_QUERY_KEY } from "./api/session.ts";
import { createConsoleTrpcClient, createQueryClient, TRPCProvider } from "./api/trpc.ts";
import { Layout } from "./components/layout.tsx";
import { ErrorNotice } from "./components/notice.tsx";
import { screens } from "./screens/index.ts";
import { SignInScreen } from "./screens/sign-in-screen.tsx";

/** The console under `/console`: signed out, the sign-in page; signed in, the screens. */
export function App() {
  const [queryClient] = useState(createQueryClient);
  const [trpcClient] = useState(createConsoleTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <Router base="/console">
          <SessionGate />
        </Router>
      </TRPCProvider>
    </QueryClientProvider>
  );
}

function SessionGate() {
  const queryClient = useQueryClient();
  const session = useQuery({ queryKey: SESSION_QUERY_KEY, queryFn: currentSession });
  if (session.isPending) return <p className="loading">Loading…</p>;
  if (session.isError) return <ErrorNotice error={session.error} />;
  if (!session.data) {
    return <SignInScreen onSignedIn={(tenant) => queryClient.setQueryData(SESSION_QUERY_KEY, tenant)} />;
  }
  return (
    <Layout tenant={session.data}>
      <Suspense fallback={<p className="loading">Loading…</p>}>
        <Switch>
          {screens.map((screen) => (
            <Route key={screen.path} path={screen.path} component={screen.component} />
          ))}
          <Route path="/">
            <Redirect to="/playground" />
          </Route>
          <Route>
            <p role="alert">No such page.</p>
          </Route>
        </Switch>
      </Suspense>
    </Layout>
  );
}
