// RawTerminal: keys one at a time (termios non-canonical, no echo), restored on exit.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The terminal's settings before raw mode, for the SIGINT handler (which can capture nothing).
nonisolated(unsafe) private var interruptedTerminal = termios()

final class RawTerminal: @unchecked Sendable {
    private var saved = termios()
    private var isRaw = false
    private let lock = NSLock()

    init() {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        if tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 { isRaw = true }
        // Ctrl-C still stops the program: give the terminal back its echo first.
        interruptedTerminal = saved
        signal(SIGINT) { _ in
            var original = interruptedTerminal
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
            _exit(130)
        }
    }

    func restore() {
        lock.withLock {
            guard isRaw else { return }
            var original = saved
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
            isRaw = false
        }
    }

    /// Keys as they are pressed, read on a thread of their own; ends at end of input.
    func keys() -> AsyncStream<UInt8> {
        AsyncStream { continuation in
            let thread = Thread {
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) == 1 { continuation.yield(byte) }
                continuation.finish()
            }
            thread.start()
        }
    }

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
