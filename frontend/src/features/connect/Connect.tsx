import { useState } from 'preact/hooks';
import { snippet, toolNames, tools, type Tool } from '../../lib/snippets';
import { copyText } from '../../lib/clipboard';
import { t, type Key } from '../../lib/i18n';
import { noteText } from '../../state/notes';
import { shallow, useView } from '../../state/use';
import { Choice } from '../../ui/Choice';

function CopyButton(props: { text: string; testid: string }) {
  const [said, setSaid] = useState<string | null>(null);
  return (
    <span class="copy">
      <button
        type="button"
        data-testid={props.testid}
        onClick={async () => setSaid((await copyText(props.text)) ? t('connect.copied') : t('connect.copyFailed'))}
      >
        {t('connect.copy')}
      </button>
      {said && (
        <span class="muted small" role="status">
          {said}
        </span>
      )}
    </span>
  );
}

const mask = (k: string) => (k.length > 12 ? `${k.slice(0, 9)}${'•'.repeat(12)}` : '•'.repeat(k.length));

/** KeyShown is the tenant's key, masked until revealed, with its copy button. */
function KeyShown(props: { value: string; tenant: string; reveal: boolean; onReveal: () => void }) {
  const { value, reveal } = props;
  return (
    <>
      <code data-testid="connect-key" data-revealed={reveal ? 'yes' : 'no'}>
        {reveal ? value : mask(value)}
      </code>{' '}
      <button type="button" data-testid="reveal-key" aria-pressed={reveal} onClick={props.onReveal}>
        {reveal ? t('connect.hide') : t('connect.reveal')}
      </button>{' '}
      <CopyButton text={value} testid="copy-key" />
      <div class="muted small">{t('connect.keyFor', { tenant: props.tenant })}</div>
    </>
  );
}

/** ToolTabs picks the tool whose setup is shown. */
function ToolTabs(props: { tool: Tool; onTool: (t: Tool) => void }) {
  return (
    <div class="tooltabs" role="tablist">
      {tools.map((x) => (
        <button type="button" role="tab" key={x} aria-selected={props.tool === x} class={props.tool === x ? 'tab current' : 'tab'} data-testid={`tool-${x}`} onClick={() => props.onTool(x)}>
          {toolNames[x]}
        </button>
      ))}
    </div>
  );
}

/** Connect: what a tool needs to reach this quotagate (GET /admin/api/connect, read once by the store). */
export function Connect() {
  const { info, error } = useView((v) => ({ info: v.connect, error: v.connectError }), shallow);
  const [tenant, setTenant] = useState('');
  const [model, setModel] = useState('');
  const [tool, setTool] = useState<Tool>('curl');
  const [reveal, setReveal] = useState(false);
  if (!info) {
    return (
      <section class="panel" data-testid="connect-panel">
        <h2>{t('connect.title')}</h2>
        <p class="muted">{error ? t('connect.unavailable', { error: noteText(error) }) : t('app.loading')}</p>
      </section>
    );
  }
  const tn = info.tenants.find((x) => x.tenant === tenant) ?? info.tenants.find((x) => x.key) ?? info.tenants[0];
  const models = tn && tn.models.length ? tn.models : info.models.map((m) => m.id);
  const m = models.includes(model) ? model : (models[0] ?? '');
  const key = tn?.key ?? '';
  const shownKey = key || 'YOUR_TENANT_KEY';
  const code = snippet(tool, { baseURL: info.base_url, origin: info.origin, key: shownKey, model: m });
  const shownCode = reveal || !key ? code : code.split(key).join(mask(key));
  return (
    <section class="panel connect" data-testid="connect-panel">
      <h2>
        {t('connect.title')} <span class="muted">{t('connect.note')}</span>
      </h2>
      <dl class="kv">
        <dt>{t('connect.baseURL')}</dt>
        <dd>
          <code data-testid="connect-base-url">{info.base_url}</code> <CopyButton text={info.base_url} testid="copy-base-url" />
        </dd>
        <dt>{t('connect.key')}</dt>
        <dd>
          {key ? <KeyShown value={key} tenant={tn.tenant} reveal={reveal} onReveal={() => setReveal(!reveal)} /> : <span class="muted">{t('connect.noKey')}</span>}
        </dd>
      </dl>
      <div class="inline">
        {info.tenants.length > 1 && (
          <Choice label={t('connect.tenant')} testid="connect-tenant" value={tn?.tenant} options={info.tenants.map((x) => x.tenant)} onChoose={setTenant} />
        )}
        <Choice label={t('connect.model')} testid="connect-model" value={m} options={models} onChoose={setModel} />
      </div>
      <ToolTabs tool={tool} onTool={setTool} />
      <p class="muted small">{t(`connect.hint.${tool}` as Key)}</p>
      <div class="snippet">
        <pre data-testid={`snippet-${tool}`} data-snippet={code}>
          {shownCode}
        </pre>
        <CopyButton text={code} testid={`copy-snippet-${tool}`} />
      </div>
    </section>
  );
}
