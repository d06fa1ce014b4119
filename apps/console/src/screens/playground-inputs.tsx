import type { InputDeclaration } from "@promptrun/contract";
import { useState } from "react";

/** What the form holds per input: text for most types, a flag for booleans. */
export type InputValues = Record<string, string | boolean>;

const STRUCTURED = new Set(["array", "object", "messages"]);
const MEDIA = new Set(["image", "file"]);

const EXAMPLES: Record<string, string> = {
  array: '["first", "second"]',
  object: '{"key": "value"}',
  messages: '[{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi!"}]',
};

/** The form's starting values: the declared defaults (shown, and sent unless changed), else empty. */
export function initialValues(inputs: Record<string, InputDeclaration>): InputValues {
  const values: InputValues = {};
  for (const [name, declaration] of Object.entries(inputs)) {
    const { type, default: fallback } = declaration;
    if (type === "boolean") values[name] = fallback === true;
    else if (fallback === undefined) values[name] = "";
    else
      values[name] =
        typeof fallback === "string"
          ? fallback
          : JSON.stringify(fallback, null, STRUCTURED.has(type) ? 2 : 0);
  }
  return values;
}

/**
 * The typed inputs of a run from the form's text, or the errors per field. An empty optional
 * field (or one with a default) is left out, so the server applies the default.
 */
export function toInputs(
  declared: Record<string, InputDeclaration>,
  values: InputValues,
): { inputs: Record<string, unknown>; errors: Record<string, string> } {
  const inputs: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const [name, declaration] of Object.entries(declared)) {
    const value = values[name];
    if (typeof value === "boolean") {
      inputs[name] = value;
      continue;
    }
    const text = value ?? "";
    const mayBeLeftOut = declaration.optional === true || declaration.default !== undefined;
    if (text.trim() === "" && (mayBeLeftOut || declaration.type !== "string")) {
      if (!mayBeLeftOut) errors[name] = "required";
      continue;
    }
    if (declaration.type === "number" || declaration.type === "integer") {
      const number = Number(text);
      if (!Number.isFinite(number)) errors[name] = "must be a number";
      else if (declaration.type === "integer" && !Number.isInteger(number))
        errors[name] = "must be a whole number";
      else inputs[name] = number;
    } else if (STRUCTURED.has(declaration.type)) {
      try {
        inputs[name] = JSON.parse(text);
      } catch (error) {
        errors[name] = `not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
      }
    } else inputs[name] = text;
  }
  return { inputs, errors };
}

const readAsDataUrl = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });

/** An image or file input: an https URL typed in, or a file from this computer sent as a data: URL. */
function MediaField({
  id,
  name,
  type,
  value,
  describedBy,
  onChange,
}: {
  id: string;
  name: string;
  type: string;
  value: string;
  describedBy: string;
  onChange: (value: string) => void;
}) {
  const [loaded, setLoaded] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const isData = value.startsWith("data:");
  return (
    <>
      <input
        id={id}
        type="url"
        placeholder="https://… or upload a file below"
        value={isData ? "" : value}
        aria-describedby={describedBy}
        onChange={(event) => {
          setLoaded(null);
          onChange(event.target.value);
        }}
      />
      <label htmlFor={`${id}-upload`} className="upload-label">
        Upload {type === "image" ? "an image" : "a file"} for {name}
      </label>
      <input
        id={`${id}-upload`}
        type="file"
        accept={type === "image" ? "image/*" : undefined}
        onChange={async (event) => {
          const file = event.target.files?.[0];
          if (!file) return;
          try {
            setFailure(null);
            onChange(await readAsDataUrl(file));
            setLoaded(`${file.name} (${Math.ceil(file.size / 1024)} KB), sent as a data: URL`);
          } catch (error) {
            setFailure(error instanceof Error ? error.message : String(error));
          }
        }}
      />
      {isData && loaded && <p className="hint">Using {loaded}.</p>}
      {failure && <p className="field-error">{failure}</p>}
    </>
  );
}

function FieldControl({
  id,
  name,
  declaration,
  value,
  describedBy,
  onChange,
}: {
  id: string;
  name: string;
  declaration: InputDeclaration;
  value: string | boolean;
  describedBy: string;
  onChange: (value: string | boolean) => void;
}) {
  const { type } = declaration;
  if (type === "boolean")
    return (
      <input
        id={id}
        type="checkbox"
        checked={value === true}
        aria-describedby={describedBy}
        onChange={(event) => onChange(event.target.checked)}
      />
    );
  const text = typeof value === "string" ? value : "";
  if (type === "number" || type === "integer")
    return (
      <input
        id={id}
        type="number"
        step={type === "integer" ? 1 : "any"}
        value={text}
        aria-describedby={describedBy}
        onChange={(event) => onChange(event.target.value)}
      />
    );
  if (MEDIA.has(type))
    return (
      <MediaField
        id={id}
        name={name}
        type={type}
        value={text}
        describedBy={describedBy}
        onChange={onChange}
      />
    );
  const structured = STRUCTURED.has(type);
  return (
    <textarea
      id={id}
      rows={structured ? 5 : 3}
      spellCheck={!structured}
      className={structured ? "code-input" : undefined}
      placeholder={structured ? EXAMPLES[type] : undefined}
      value={text}
      aria-describedby={describedBy}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}

/** One field per declared input, labelled with its name and type; its description and error below. */
export function InputFields({
  declared,
  values,
  errors,
  onChange,
}: {
  declared: Record<string, InputDeclaration>;
  values: InputValues;
  errors: Record<string, string>;
  onChange: (name: string, value: string | boolean) => void;
}) {
  const names = Object.keys(declared);
  if (names.length === 0) return <p className="muted">This version declares no inputs.</p>;
  return (
    <>
      {names.map((name) => {
        const declaration = declared[name]!;
        const id = `input-${name}`;
        const hintId = `${id}-hint`;
        const errorId = `${id}-error`;
        const optional = declaration.optional === true || declaration.default !== undefined;
        const label = (
          <>
            {name}{" "}
            <span className="type-badge">
              {declaration.type}
              {optional ? ", optional" : ""}
            </span>
          </>
        );
        return (
          <div key={name} className="input-field">
            {declaration.type === "boolean" ? (
              <label className="checkbox-label" htmlFor={id}>
                <FieldControl
                  id={id}
                  name={name}
                  declaration={declaration}
                  value={values[name] ?? false}
                  describedBy={`${hintId} ${errorId}`}
                  onChange={(value) => onChange(name, value)}
                />
                {label}
              </label>
            ) : (
              <>
                <label htmlFor={id}>{label}</label>
                <FieldControl
                  id={id}
                  name={name}
                  declaration={declaration}
                  value={values[name] ?? ""}
                  describedBy={`${hintId} ${errorId}`}
                  onChange={(value) => onChange(name, value)}
                />
              </>
            )}
            <p id={hintId} className="hint">
              {declaration.description ?? ""}
              {STRUCTURED.has(declaration.type)
                ? ` JSON ${declaration.type === "messages" ? "list of {role, content}" : declaration.type}.`
                : ""}
            </p>
            <p id={errorId} className="field-error" role={errors[name] ? "alert" : undefined}>
              {errors[name] ? `${name}: ${errors[name]}` : ""}
            </p>
          </div>
        );
      })}
    </>
  );
}
