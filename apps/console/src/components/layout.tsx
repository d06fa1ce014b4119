import { useQueryClient } from "@tanstack/react-query";
import { Link, useLocation } from "wouter";
import { type SignedInTenant, signOut } from "../api/session.ts";
import { navigation } from "../screens/index.ts";

/** The frame of every screen: the navigation, the tenant, sign-out. */
export function Layout({ tenant, children }: { tenant: SignedInTenant; children: React.ReactNode }) {
  const queryClient = useQueryClient();
  const [location] = useLocation();
  const leave = async () => {
    await signOut();
    queryClient.clear();
    window.location.assign("/console");
  };
  return (
    <div className="console">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Promptrun</span>
        <nav aria-label="Console">
          <ul>
            {navigation.map((item) => (
              <li key={item.href}>
                <Link
                  href={item.href}
                  aria-current={
                    location === item.href || location.startsWith(`${item.href}/`) ? "page" : undefined
                  }
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className="tenant" title={tenant.id}>
          {tenant.name}
        </span>
        <button type="button" className="ghost" onClick={leave}>
          Sign out
        </button>
      </header>
      <main id="main" className="screen">
        {children}
      </main>
    </div>
  );
}
