// RawTerminal: keys one at a time (termios non-canonical, no echo), frames drawn on the terminal's
// alternate screen with the cursor hidden; the terminal is given back as it was on every way out.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The terminal's settings before raw mode, and whether raw mode and the alternate screen are on,
/// for the signal handler (which can capture nothing).
nonisolated(unsafe) private var interruptedTerminal = termios()
nonisolated(unsafe) private var interruptedRaw = false
nonisolated(unsafe) private var interruptedScreen = false

/// Switches to the alternate screen (what full-screen programs such as less and vim draw on, so
/// the shell's screen is untouched) and hides the cursor.
private let enterScreen: StaticString = "\u{1B}[?1049h\u{1B}[?25l"
/// Shows the cursor and goes back to the shell's screen as it was before `enterScreen`.
private let leaveScreen: StaticString = "\u{1B}[?25h\u{1B}[?1049l"

/// Writes `text` with write(2): safe in a signal handler (no allocation, no lock).
private func writeToTerminal(_ text: StaticString) {
    _ = write(STDOUT_FILENO, text.utf8Start, text.utf8CodeUnitCount)
}

final class RawTerminal: @unchecked Sendable {
    private var saved = termios()
    private var isRaw = false
    private var onScreen = false
    private let lock = NSLock()

    init() {
        // Ctrl-C (and a kill) still stops the program: give the terminal back first.
        let handler: @convention(c) (Int32) -> Void = { signal in
            if interruptedScreen { writeToTerminal(leaveScreen) }
            if interruptedRaw {
                var original = interruptedTerminal
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
            }
            _exit(128 + signal)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        interruptedTerminal = saved
        if tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 {
            isRaw = true
            interruptedRaw = true
        }
    }

    /// Draws on the alternate screen from now on, with the cursor hidden, when the output is a
    /// terminal (called before the first frame, so what was written before stays on the shell's
    /// screen). `restore` leaves it.
    func useScreen() {
        lock.withLock {
            guard !onScreen, isatty(STDOUT_FILENO) == 1 else { return }
            writeToTerminal(enterScreen)
            onScreen = true
            interruptedScreen = true
        }
    }

    /// Gives the terminal back as it was: the shell's screen and the cursor, echo and line
    /// editing. Calling it again does nothing.
    func restore() {
        lock.withLock {
            if onScreen {
                writeToTerminal(leaveScreen)
                onScreen = false
                interruptedScreen = false
            }
            guard isRaw else { return }
            var original = saved
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
            isRaw = false
            interruptedRaw = false
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
