// Setup snippets for the tools people route through quotagate, generated
// from the live connection (base URL, key, a model). Codex uses the
// Responses door (/v1/responses), Claude Code the Messages door
// (/v1/messages, base URL without /v1), Gemini CLI and the Google Gen AI
// SDK the Gemini door (/v1beta/models/…, base URL without /v1); the rest
// speak chat completions, and Continue also the completions and embeddings
// doors.

export interface SnippetInput {
  baseURL: string; // http://127.0.0.1:8787/v1
  origin: string; // http://127.0.0.1:8787
  key: string;
  model: string;
}

export type Tool =
  | 'curl'
  | 'openai-python'
  | 'openai-js'
  | 'google-genai'
  | 'codex'
  | 'claude-code'
  | 'gemini-cli'
  | 'aider'
  | 'continue'
  | 'cline'
  | 'opencode'
  | 'zed';
export const tools: readonly Tool[] = ['curl', 'openai-python', 'openai-js', 'google-genai', 'codex', 'claude-code', 'gemini-cli', 'aider', 'continue', 'cline', 'opencode', 'zed'];

export const toolNames: Record<Tool, string> = {
  curl: 'curl',
  'openai-python': 'OpenAI SDK (Python)',
  'openai-js': 'OpenAI SDK (JS)',
  'google-genai': 'Google Gen AI SDK (JS)',
  codex: 'Codex CLI',
  'claude-code': 'Claude Code',
  'gemini-cli': 'Gemini CLI',
  aider: 'aider',
  continue: 'Continue',
  cline: 'Cline',
  opencode: 'OpenCode',
  zed: 'Zed',
};

/** sh quotes a value for a POSIX shell. */
export function sh(v: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

const js = (v: string) => JSON.stringify(v);
const toml = (v: string) => JSON.stringify(v); // a TOML basic string is a JSON string for these values

/** programSnippets are the setups a person pastes into a shell or a program: curl and the OpenAI SDKs. */
const programSnippets = {
  curl: ({ baseURL, key, model }: SnippetInput) =>
    [
      `curl -sS ${sh(`${baseURL}/chat/completions`)} \\`,
      `  -H ${sh(`Authorization: Bearer ${key}`)} \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d ${sh(JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }))}`,
    ].join('\n'),
  'openai-python': ({ baseURL, key, model }: SnippetInput) =>
    [
      'from openai import OpenAI',
      '',
      `client = OpenAI(base_url=${js(baseURL)}, api_key=${js(key)})`,
      `r = client.chat.completions.create(model=${js(model)}, messages=[{"role": "user", "content": "hi"}])`,
      'print(r.choices[0].message.content)',
    ].join('\n'),
  'openai-js': ({ baseURL, key, model }: SnippetInput) =>
    [
      "import OpenAI from 'openai';",
      '',
      `const client = new OpenAI({ baseURL: ${js(baseURL)}, apiKey: ${js(key)} });`,
      `const r = await client.chat.completions.create({ model: ${js(model)}, messages: [{ role: 'user', content: 'hi' }] });`,
      'console.log(r.choices[0].message.content);',
    ].join('\n'),
  // The Gemini API at the origin: the SDK adds /v1/models/… itself.
  'google-genai': ({ origin, key, model }: SnippetInput) =>
    [
      "import { GoogleGenAI } from '@google/genai';",
      '',
      `const ai = new GoogleGenAI({ apiKey: ${js(key)}, httpOptions: { baseUrl: ${js(origin)} } });`,
      `const r = await ai.models.generateContent({ model: ${js(model)}, contents: 'hi' });`,
      'console.log(r.text);',
    ].join('\n'),
};

/** geminiSettings is ~/.gemini/settings.json for quotagate: the API-key auth, and nothing that phones home (e2e/gemini_test.go runs Gemini CLI with it). */
export const geminiSettings = JSON.stringify(
  {
    security: { auth: { selectedType: 'gemini-api-key' } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true },
  },
  null,
  2,
);

/** agentSnippets set up the coding agents that speak their own door (Codex: Responses; Claude Code: Messages; Gemini CLI: Gemini) or chat through environment variables. */
const agentSnippets = {
  codex: ({ baseURL, key, model }: SnippetInput) =>
    [
      '# ~/.codex/config.toml',
      `model = ${toml(model)}`,
      'model_provider = "quotagate"',
      '',
      '[model_providers.quotagate]',
      'name = "quotagate"',
      `base_url = ${toml(baseURL)}`,
      'env_key = "QUOTAGATE_API_KEY"',
      'wire_api = "responses"',
      'supports_websockets = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[features]',
      'plugins = false',
      '',
      '# then, in the shell:',
      `# export QUOTAGATE_API_KEY=${sh(key)}`,
      '# codex exec --skip-git-repo-check "say hi"',
    ].join('\n'),
  'claude-code': ({ origin, key, model }: SnippetInput) =>
    [
      `export ANTHROPIC_BASE_URL=${sh(origin)}`,
      `export ANTHROPIC_AUTH_TOKEN=${sh(key)}`,
      `export ANTHROPIC_MODEL=${sh(model)}`,
      `export ANTHROPIC_SMALL_FAST_MODEL=${sh(model)}`,
      `export ANTHROPIC_DEFAULT_HAIKU_MODEL=${sh(model)}`,
      'export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1',
      'claude',
    ].join('\n'),
  // Headless runs need the API-key auth chosen in settings.json (else
  // "Invalid auth method selected.") and the workspace trusted.
  'gemini-cli': ({ origin, key, model }: SnippetInput) =>
    [
      '# ~/.gemini/settings.json',
      geminiSettings,
      '',
      '# then, in the shell:',
      `export GOOGLE_GEMINI_BASE_URL=${sh(origin)}`,
      `export GEMINI_API_KEY=${sh(key)}`,
      'export GEMINI_CLI_TRUST_WORKSPACE=true',
      `gemini -m ${sh(model)}`,
    ].join('\n'),
  aider: ({ baseURL, key, model }: SnippetInput) =>
    [`export OPENAI_API_BASE=${sh(baseURL)}`, `export OPENAI_API_KEY=${sh(key)}`, `aider --model ${sh(`openai/${model}`)}`].join('\n'),
};

/** editorSnippets are the editors' configuration files and settings screens. */
const editorSnippets = {
  // Chat, tab-autocomplete (fill-in-the-middle on the legacy completions
  // door) and codebase indexing (the embeddings door) all through quotagate;
  // the last two need an upstream whose protocols list completions and
  // embeddings (the demo's do).
  continue: ({ baseURL, key, model }: SnippetInput) => {
    const entry = (name: string, roles: string, extra: string[] = []) => [
      `  - name: ${js(`quotagate ${name}`)}`,
      '    provider: openai',
      `    model: ${js(model)}`,
      `    apiBase: ${js(baseURL)}`,
      `    apiKey: ${js(key)}`,
      `    roles: [${roles}]`,
      ...extra,
    ];
    return [
      '# ~/.continue/config.yaml',
      'name: quotagate',
      'version: 0.0.1',
      'schema: v1',
      'models:',
      ...entry(model, 'chat, edit, apply'),
      ...entry(`${model} autocomplete`, 'autocomplete', ['    useLegacyCompletionsEndpoint: true']),
      ...entry(`${model} embeddings`, 'embed'),
    ].join('\n');
  },
  cline: ({ baseURL, key, model }: SnippetInput) =>
    [`API Provider: OpenAI Compatible`, `Base URL:     ${baseURL}`, `API Key:      ${key}`, `Model ID:     ${model}`].join('\n'),
  opencode: ({ baseURL, key, model }: SnippetInput) =>
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        provider: {
          quotagate: {
            npm: '@ai-sdk/openai-compatible',
            name: 'quotagate',
            options: { baseURL, apiKey: key },
            models: { [model]: { name: model } },
          },
        },
        model: `quotagate/${model}`,
      },
      null,
      2,
    ),
  zed: ({ baseURL, model }: SnippetInput) =>
    JSON.stringify(
      {
        language_models: {
          openai_compatible: {
            quotagate: { api_url: baseURL, available_models: [{ name: model, max_tokens: 32768 }] },
          },
        },
      },
      null,
      2,
    ),
};

const snippets: Record<Tool, (i: SnippetInput) => string> = { ...programSnippets, ...agentSnippets, ...editorSnippets };

export function snippet(tool: Tool, i: SnippetInput): string {
  return snippets[tool](i);
}
