export function ErrorBanner(props: { error: string | null; onDismiss: () => void }) {
  if (!props.error) return null;
  return (
    <div class="banner error" role="alert">
      <span data-testid="error-banner">{props.error}</span>
      <button type="button" class="link" aria-label="dismiss" onClick={props.onDismiss}>
        ×
      </button>
    </div>
  );
}

export function Notice(props: { notice: string | null }) {
  if (!props.notice) return null;
  return (
    <div class="banner notice" role="status" data-testid="notice">
      {props.notice}
    </div>
  );
}
