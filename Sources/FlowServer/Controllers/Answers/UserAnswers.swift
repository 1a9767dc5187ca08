// The answers of the user routes: a user's state.
import FlowStore
import JSON

/// `{userId, state, createdAt, updatedAt}`: a user's state as flows read it.
struct UserAnswer: JSONAnswer {
    let user: UserRecord

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("userId")
        writer.writeString(user.id)
        writer.writeKey("state")
        writer.writeRawValue(Array(user.state.utf8))
        writer.writeKey("createdAt")
        writer.writeString(user.createdAt)
        writer.writeKey("updatedAt")
        writer.writeString(user.updatedAt)
        writer.endObject()
    }
}
