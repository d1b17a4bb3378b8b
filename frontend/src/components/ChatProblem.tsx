/** A chat's or a battle's problem, read out as an alert; nothing when there is none. */
export function ChatProblem({ text }: { text: string | null }) {
  return text ? (
    <p className="chat-alert" role="alert">
      {text}
    </p>
  ) : null;
}
