// KeychainSessionStore: the session kept in the Keychain, on Apple platforms only.
#if canImport(Security)
import Foundation
import Security

/// A ``SessionStore`` in the Keychain: one generic-password item per `service` and `account`,
/// readable after the first unlock. Not built (nor tested) on Linux; it only moves bytes in and
/// out of `SecItem` calls.
///
/// ```swift
/// let store = KeychainSessionStore(service: "com.example.app.flowstack")
/// ```
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String

    public init(service: String, account: String = "session") {
        self.service = service
        self.account = account
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: OSStatus
        public var description: String { "Keychain error \(status)" }
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() throws -> StoredSession? {
        var request = query
        request[kSecReturnData as String] = true
        request[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(request as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw Failure(status: status) }
        return StoredSession(encoded: Array(data))
    }

    public func save(_ session: StoredSession) throws {
        let data = Data(session.encoded())
        let update = SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        if update == errSecSuccess { return }
        guard update == errSecItemNotFound else { throw Failure(status: update) }
        var add = query
        add[kSecValueData as String] = data
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(add as CFDictionary, nil)
        guard status == errSecSuccess else { throw Failure(status: status) }
    }

    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Failure(status: status) }
    }
}
#endif
