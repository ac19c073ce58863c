// libqrencode (Debian's libqrencode-dev, LGPL-2.1+): QR code symbols as module matrices.
// Only PulseQR sees this module.
#include <qrencode.h>
