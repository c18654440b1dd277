/**
 * Read-only access to the two collections of LibreChat's MongoDB the console needs (LibreChat-AI/LibreChat,
 * packages/data-schemas/src/schema/session.ts and user.ts):
 * - `sessions`: `{_id: ObjectId, user: ObjectId, refreshTokenHash: string (SHA-256 hex of the refresh
 *   token), expiration: Date}`; a logout deletes the document.
 * - `users`: `{_id: ObjectId, email: string, role: string}`; `role` is `ADMIN` or `USER` (newer versions allow
 *   custom role names; only `ADMIN` is an administrator).
 */
import { MongoClient, ObjectId } from "mongodb";

/** A chat session as stored. */
export interface ChatSessionDoc {
  /** The session's `_id` as hex. */
  id: string;
  /** The owning user's `_id` as hex. */
  userId: string;
  refreshTokenHash: string;
  expiration: Date;
}

/** A chat user as stored (the fields the console reads). */
export interface ChatUserDoc {
  id: string;
  email: string;
  role: string;
}

/** What the console reads from LibreChat's database. Implementations never write. */
export interface LibreChatStore {
  /** The session with this `_id`, or null (unknown id, malformed id, or deleted at logout). */
  findSession(sessionId: string): Promise<ChatSessionDoc | null>;
  /** The user with this `_id`, or null. */
  findUser(userId: string): Promise<ChatUserDoc | null>;
  /** Resolves when the database answers; rejects with the reason otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const toObjectId = (hex: string): ObjectId | null =>
  ObjectId.isValid(hex) && hex.length === 24 ? new ObjectId(hex) : null;

/** {@link LibreChatStore} over the official `mongodb` driver (MONGO_URI; the database named in the URI). */
export class MongoLibreChatStore implements LibreChatStore {
  private readonly client: MongoClient;

  constructor(uri: string) {
    // Short timeouts: a console request waits on this; an unreachable chat database must fail fast.
    this.client = new MongoClient(uri, { serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000 });
  }

  private get db() {
    return this.client.db();
  }

  async findSession(sessionId: string): Promise<ChatSessionDoc | null> {
    const _id = toObjectId(sessionId);
    if (_id === null) return null;
    const doc = await this.db
      .collection("sessions")
      .findOne({ _id }, { projection: { user: 1, refreshTokenHash: 1, expiration: 1 } });
    if (doc === null) return null;
    return {
      id: String(doc._id),
      userId: String(doc.user),
      refreshTokenHash: String(doc.refreshTokenHash ?? ""),
      expiration: doc.expiration instanceof Date ? doc.expiration : new Date(0),
    };
  }

  async findUser(userId: string): Promise<ChatUserDoc | null> {
    const _id = toObjectId(userId);
    if (_id === null) return null;
    const doc = await this.db.collection("users").findOne({ _id }, { projection: { email: 1, role: 1 } });
    if (doc === null) return null;
    return { id: String(doc._id), email: String(doc.email ?? ""), role: String(doc.role ?? "USER") };
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
