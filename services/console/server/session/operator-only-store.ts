/**
 * The console without a chat (no MONGO_URI; `npm start` from a checkout runs it so): no chat session and no chat
 * user exist, so chat cookies never sign anyone in, and the operator's master-key sign-in is the only way in.
 */
import type { ChatSessionDoc, ChatUserDoc, LibreChatStore } from "./librechat-store.js";

/** {@link LibreChatStore} of operator-only mode: finds nothing, and has no database to be down. */
export class OperatorOnlyStore implements LibreChatStore {
  async findSession(_sessionId: string): Promise<ChatSessionDoc | null> {
    return null;
  }

  async findUser(_userId: string): Promise<ChatUserDoc | null> {
    return null;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
