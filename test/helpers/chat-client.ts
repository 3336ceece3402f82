/**
 * The `ai` SDK's own chat client for tests (AbstractChat, what `useChat` wraps, over
 * DefaultChatTransport), with the smallest state a UI binding keeps; it sends approval answers on
 * its own, as a page using `lastAssistantMessageIsCompleteWithApprovalResponses` does.
 */
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type ChatState, type ChatStatus, type UIMessage } from 'ai';

/** The smallest ChatState: what a UI framework binding keeps. */
export class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined;
  messages: UIMessage[] = [];
  pushMessage = (m: UIMessage) => void this.messages.push(m);
  popMessage = () => void this.messages.pop();
  replaceMessage = (i: number, m: UIMessage) => void (this.messages[i] = m);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** A chat page talking to `url`; several may share one state (the same page, another server). */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(
    readonly memory: MemoryState,
    url: string,
  ) {
    super({ state: memory, transport: new DefaultChatTransport({ api: url }), sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
  }
}
