// The window's start-at-login switch (Go side: app/desktop.go StartAtLogin,
// SetStartAtLogin over backend/autostart). A browser on `quotagate serve`
// has no such binding, so the switch is shown only in the window.
import { wailsApp, type Host } from './desktop';

/** AutostartApp is the part of the bound App the switch uses. */
export interface AutostartApp {
  StartAtLogin(): Promise<boolean>;
  SetStartAtLogin(on: boolean): Promise<void>;
}

/** autostartApp returns the bound switch inside the window, or null (a browser, or an older window). */
export function autostartApp(host?: Host): AutostartApp | null {
  const app = wailsApp(host) as (Partial<AutostartApp> & object) | null;
  if (!app || typeof app.StartAtLogin !== 'function' || typeof app.SetStartAtLogin !== 'function') return null;
  return app as AutostartApp;
}

/** setStartAtLogin sets the switch and reads it back, so the checkbox shows what the system now has. */
export async function setStartAtLogin(app: AutostartApp, on: boolean): Promise<boolean> {
  await app.SetStartAtLogin(on);
  return app.StartAtLogin();
}
