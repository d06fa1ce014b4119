import { useEffect, useId, useRef } from "react";
import "./confirm-dialog.css";

/**
 * A modal confirmation on the native `<dialog>` (focus kept inside, Escape cancels, the page
 * behind inert); its title is its accessible name. Open while `open`. `onClose` is called on
 * cancel, and after confirming unless `closeOnConfirm` is false (the caller closes it when its
 * action is done; `busy` meanwhile).
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  busy = false,
  closeOnConfirm = true,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  children?: React.ReactNode;
  confirmLabel: string;
  busy?: boolean;
  closeOnConfirm?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div className="confirm-dialog-actions">
        <button type="button" className="ghost" onClick={onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          className="danger"
          disabled={busy}
          onClick={() => {
            onConfirm();
            if (closeOnConfirm) onClose();
          }}
        >
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
