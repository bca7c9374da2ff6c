export { currencyCodes, isCurrency, minorUnits } from './iso-4217';
