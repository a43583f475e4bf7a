package cardsim_test

import (
	"fmt"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// Example sends APDUs to a simulated card: SELECT, then a wrong PW1, which
// the card counts.
func Example() {
	card := cardsim.New(cardsim.Config{Profile: cardsim.YubiKey4})
	sel := append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)
	fmt.Printf("%x\n", card.Transmit(sel))
	fmt.Printf("%x\n", card.Transmit([]byte{0x00, 0x20, 0x00, 0x81, 0x06, '0', '0', '0', '0', '0', '0'}))
	pw1, _ := card.Tries()
	fmt.Println(pw1)
	// Output:
	// 9000
	// 63c2
	// 2
}
