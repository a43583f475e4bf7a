package yubihsmsim

// CommandAudit returns the command-audit setting of cmd (0 off, 1 on, 2
// fixed on), for tests that check what a setup turned on.
func (d *Device) CommandAudit(cmd byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts.commandAudit[cmd]
}
