/**
 * The consent page of the authorization server (plain server-rendered HTML, no script, no external
 * asset): the carrier pastes one of its API keys (the key decides the tenant, as on REST) and
 * chooses what the client may do — `read` and/or `write`, never more than the key may. Every value
 * shown is escaped; client names and URIs come from whoever registered the client.
 */
import { OAUTH_SCOPES } from './resource-urls.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const SCOPE_TEXT: Record<(typeof OAUTH_SCOPES)[number], string> = {
  read: 'Read: invoices, trips, tax and audit reports (every tool that changes nothing)',
  write: "Write: the tools that change data, as the key's write scope allows on the API",
};

export interface ConsentView {
  /** Where the form posts (the interaction's own URL). */
  action: string;
  clientName: string;
  /** The host the client's answer goes back to (the redirect URI's), so the carrier sees who asks. */
  redirectHost: string;
  /** The MCP URL the token is for. */
  resource: string;
  /** Scopes ticked at first: those the client asked for. */
  requested: string[];
  /** What went wrong with the last submission, shown above the form. */
  error?: string;
}

/** The page's security headers: no script, no framing, nothing loaded from elsewhere. */
export const CONSENT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'label{display:block;margin:.6rem 0}input[type=password]{width:100%;padding:.4rem;font:inherit}' +
  '.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6rem}button{font:inherit;padding:.4rem 1rem;margin-right:.6rem}code{word-break:break-all}';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export function consentPage(view: ConsentView): string {
  const scopes = OAUTH_SCOPES.map(
    (scope) =>
      `<label><input type="checkbox" name="scope" value="${scope}"${view.requested.includes(scope) ? ' checked' : ''}> ${escapeHtml(SCOPE_TEXT[scope])}</label>`,
  ).join('');
  return page(
    'Authorize an MCP client',
    `<h1>Authorize an MCP client</h1>` +
      `<p><strong>${escapeHtml(view.clientName)}</strong> (answering to <code>${escapeHtml(view.redirectHost)}</code>) asks to use the freight back office at <code>${escapeHtml(view.resource)}</code> on your behalf.</p>` +
      (view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : '') +
      `<form method="post" action="${escapeHtml(view.action)}">` +
      `<label>API key of your company (it decides whose data the client sees)<input type="password" name="api_key" autocomplete="off" required></label>` +
      `<fieldset><legend>The client may</legend>${scopes}</fieldset>` +
      `<p><button type="submit" name="decision" value="approve">Authorize</button><button type="submit" name="decision" value="deny" formnovalidate>Deny</button></p>` +
      `</form>`,
  );
}

/** The page shown when the authorization cannot go on (expired, opened elsewhere). */
export function consentProblemPage(message: string): string {
  return page('Authorization failed', `<h1>Authorization failed</h1><p class="error">${escapeHtml(message)}</p><p>Start again from your MCP client.</p>`);
}
